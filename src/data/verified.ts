import { verifiedIds } from './verified-ids.js';

/**
 * SWE-bench Verified, for decontamination without a download: its 12 repositories and 500 instance ids
 * (ids as published by the SWE-bench Verified dataset; see verified-ids.ts for where the list was taken from).
 */
export const verified = {
  repos: [
    'astropy/astropy',
    'django/django',
    'matplotlib/matplotlib',
    'mwaskom/seaborn',
    'pallets/flask',
    'psf/requests',
    'pydata/xarray',
    'pylint-dev/pylint',
    'pytest-dev/pytest',
    'scikit-learn/scikit-learn',
    'sphinx-doc/sphinx',
    'sympy/sympy',
  ],
  ids: verifiedIds.split(/\s+/).filter(Boolean),
};
