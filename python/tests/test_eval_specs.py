"""SWE-bench's per-repo test specs in alight (src/eval/grade/specs.ts) against the official table they come from:
swebench 4.1.0's `MAP_REPO_VERSION_TO_SPECS_PY` (v5 moved the specs into each row's eval_script, so 4.1.0 is the last
release that ships them) and its `get_test_directives`. The wheel is downloaded once (no dependencies) and read, not
imported: its package __init__ pulls in the whole harness."""

import ast
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import REPO

VERIFIED_REPOS = [
    "astropy/astropy",
    "django/django",
    "matplotlib/matplotlib",
    "mwaskom/seaborn",
    "pallets/flask",
    "psf/requests",
    "pydata/xarray",
    "pylint-dev/pylint",
    "pytest-dev/pytest",
    "scikit-learn/scikit-learn",
    "sphinx-doc/sphinx",
    "sympy/sympy",
]


@pytest.fixture(scope="module")
def official():
    cache = Path(os.path.expanduser("~/.cache/alight/swebench-4.1.0"))
    wheels = list(cache.glob("swebench-4.1.0-*.whl"))
    if not wheels:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "swebench==4.1.0", "-d", str(cache)],
            check=True,
        )
        wheels = list(cache.glob("swebench-4.1.0-*.whl"))
    with zipfile.ZipFile(wheels[0]) as wheel:
        constants = wheel.read("swebench/harness/constants/python.py").decode()
        test_spec = wheel.read("swebench/harness/test_spec/python.py").decode()
        init = wheel.read("swebench/harness/constants/__init__.py").decode()
    specs = {}
    exec(compile(constants, "constants/python.py", "exec"), specs)  # plain data, no imports
    # get_test_directives alone, with the one constant it reads.
    fn = next(
        n for n in ast.parse(test_spec).body if isinstance(n, ast.FunctionDef) and n.name == "get_test_directives"
    )
    non_test = next(
        n
        for n in ast.parse(init).body
        if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "NON_TEST_EXTS"
    )
    scope = {"re": re, "SWEbenchInstance": dict}
    exec(compile(ast.Module(body=[non_test, fn], type_ignores=[]), "test_spec/python.py", "exec"), scope)
    return specs["MAP_REPO_VERSION_TO_SPECS_PY"], scope["get_test_directives"]


def ours(queries):
    script = f"""
      import {{ repoSpec, testDirectives }} from '{REPO}/dist/src/eval/grade/specs.js';
      const qs = JSON.parse(process.argv[1]);
      console.log(JSON.stringify(qs.map((q) =>
        q.test_patch === undefined ? repoSpec(q.repo, q.version) ?? null : testDirectives(q.repo, q.test_patch))));
    """
    out = subprocess.run(
        ["node", "--input-type=module", "-e", script, json.dumps(queries)], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


def test_every_verified_repo_version_has_the_official_test_command_install_and_environment(official):
    table, _ = official
    queries = [{"repo": repo, "version": version} for repo in VERIFIED_REPOS for version in table[repo]]
    mine = ours(queries)
    assert len(queries) > 150
    for q, spec in zip(queries, mine):
        theirs = table[q["repo"]][q["version"]]
        assert spec is not None, q
        assert spec["test_cmd"] == theirs["test_cmd"], q
        assert spec["install"] == theirs.get("install"), q
        assert spec.get("eval_commands") == theirs.get("eval_commands"), q


def test_test_directives_match_the_official_ones(official):
    _, get_test_directives = official
    patch = "".join(
        f"diff --git a/{f} b/{f}\n--- a/{f}\n+++ b/{f}\n@@ -1 +1 @@\n-a\n+b\n"
        for f in [
            "tests/model_fields/test_jsonfield.py",
            "tests/model_fields/models.py",
            "docs/releases/4.1.txt",
            "tests/fixtures/x.json",
            "lib/matplotlib/tests/baseline_images/a.png",
            "sympy/core/tests/test_basic.py",
            "pyproject.toml",
        ]
    )
    queries = [
        {"repo": repo, "test_patch": patch} for repo in ["django/django", "sympy/sympy", "matplotlib/matplotlib"]
    ]
    assert ours(queries) == [get_test_directives({"repo": q["repo"], "test_patch": patch}) for q in queries]
