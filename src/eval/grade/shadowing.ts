import { probe } from '../../process/launch.js';

// What pytest itself and its usual plugins import, besides the standard library.
const framework = [
  'pytest',
  '_pytest',
  'pluggy',
  'py',
  'iniconfig',
  'packaging',
  'exceptiongroup',
  'tomli',
  'colorama',
  'pygments',
  'xdist',
  'execnet',
  // alight's own plugin (pytest-results.ts): a module of that name at the root would be loaded in its place.
  'alight_guard',
];

let names: Set<string> | undefined;

/**
 * Module names a prediction may not add a file or package for where the test run imports from: the standard library's
 * and the test framework's.
 */
export function shadowableModules(): Set<string> {
  if (!names) {
    const res = probe('python3', ['-c', 'import sys; print("\\n".join(sorted(sys.stdlib_module_names)))']);
    names = new Set([...framework, ...(res.exitCode === 0 ? res.stdout.split('\n').filter(Boolean) : [])]);
  }
  return names;
}
