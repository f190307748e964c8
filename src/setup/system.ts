import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { AlightError, ExitCode } from '../errors.js';
import { probe } from '../process/launch.js';
import { runInstall } from './command.js';
import type { SetupListener } from './events.js';

/** A Debian/Ubuntu package some feature needs, and how to tell it is there. */
export interface SystemNeed {
  pkg: string;
  present(): boolean;
}

/** The package that provides `command`. */
export function commandNeed(command: string, pkg: string): SystemNeed {
  return { pkg, present: () => which(command) !== null };
}

/** The path of `command` on PATH (plus the sbin folders, which a non-root PATH may lack), or null. */
export function which(command: string): string | null {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/sbin'];
  for (const dir of dirs.filter(Boolean)) {
    try {
      accessSync(join(dir, command), constants.X_OK);
      return join(dir, command);
    } catch {
      /* not here */
    }
  }
  return null;
}

/**
 * How to run apt-get here: directly as root, through sudo when it needs no password, else null. sudo resets the
 * environment, so the non-interactive frontend goes through env(1).
 */
function aptPrefix(): string[] | null {
  const apt = ['env', 'DEBIAN_FRONTEND=noninteractive', 'apt-get'];
  if (process.getuid?.() === 0) return apt;
  return probe('sudo', ['-n', 'true']).exitCode === 0 ? ['sudo', '-n', ...apt] : null;
}

/**
 * Installs the packages of the needs whose command is missing, with apt-get (as root, or through password-less sudo).
 * Where it cannot, one error lists the exact command to run. `why` says what they are for.
 */
export async function ensureSystemPackages(needs: SystemNeed[], why: string, listener: SetupListener): Promise<void> {
  const pkgs = [...new Set(needs.filter((n) => !n.present()).map((n) => n.pkg))];
  if (pkgs.length === 0) return;
  const command = `apt-get install -y --no-install-recommends ${pkgs.join(' ')}`;
  const prefix = aptPrefix();
  if (!which('apt-get') || prefix === null) {
    const how = which('apt-get')
      ? `sudo ${command}`
      : `your system's package manager: ${pkgs.join(', ')} (Debian/Ubuntu names)`;
    throw new AlightError(
      `${why} needs ${pkgs.join(', ')}, not installed, and alight cannot install system packages without a password; ` +
        `install them with: ${how}`,
      ExitCode.failure,
    );
  }
  const [cmd, ...args] = prefix;
  const sudo = cmd === 'sudo' ? 'sudo ' : '';
  listener({ type: 'step', message: `${why}: ${sudo}apt-get update, then ${sudo}${command}` });
  await runInstall(cmd, [...args, 'update', '-qq'], listener);
  await runInstall(cmd, [...args, ...command.split(' ').slice(1)], listener);
}
