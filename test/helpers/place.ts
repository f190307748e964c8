import { renameSync, rmSync } from 'node:fs';

/**
 * Puts a folder made under a name of this process's (`building`) where the files of a run share it (`target`): the
 * rename is atomic, and if another worker placed one there first, its folder stays and ours goes.
 */
export function place(building: string, target: string): void {
  try {
    renameSync(building, target);
  } catch {
    rmSync(building, { recursive: true, force: true });
  }
}
