#!/usr/bin/env node
import { main } from '../dist/commands/index.js';

await main(process.argv);
