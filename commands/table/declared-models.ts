import { Option } from 'commander';
import { alwaysSet, type FlagsOf, flag } from '../flags.js';
import { jsonOption } from '../options.js';

// The flags of `alight models`' commands, apart from their rows, as declared.ts explains: commands/models.ts reads
// their types.

/** `--out`: a new Hugging Face folder. */
const outFolder = () =>
  alwaysSet<string>(new Option('--out <dir>', 'the folder to write (new or empty)').makeOptionMandatory());

/** `alight models list`'s flags. */
export const modelsListFlags = () => ({ json: jsonOption() });
export type ModelsListFlags = FlagsOf<ReturnType<typeof modelsListFlags>>;

/** `alight models convert`'s flags. */
export const convertFlags = () => ({ out: outFolder(), json: jsonOption() });
export type ConvertFlags = FlagsOf<ReturnType<typeof convertFlags>>;

/** `alight models merge`'s flags. */
export const mergeFlags = () => ({
  adapter: alwaysSet<string>(
    new Option('--adapter <dir>', 'the adapter folder (adapter_config.json)').makeOptionMandatory(),
  ),
  out: outFolder(),
  base: flag<string>(new Option('--base <dir>', 'the base model folder (default: the one the adapter was trained on)')),
  json: jsonOption(),
});
export type MergeFlags = FlagsOf<ReturnType<typeof mergeFlags>>;
