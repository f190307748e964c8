"""alight's SWE-bench log parsers and grading (src/eval, TypeScript) against the official `swebench` package 5.0.2's own
functions on the same logs: status maps, the tests report, the resolution, and which logs are refused. `swebench` runs
in a virtualenv of its own (ALIGHT_SWEBENCH_PYTHON, made by test/e2e/python.test.ts) as its dependencies (datasets,
pyarrow ≥ numpy 2) cannot share the worker's, which keeps Debian's torch on numpy 1.x."""

import json
import os
import subprocess
import sys
import textwrap

from conftest import REPO

START, END, EXIT = ">>>>> Start Test Output", ">>>>> End Test Output", ">>>>> Test Exit Code"


def real_pytest_log(tmp_path):
    """A real `pytest -rA` run with every outcome, a parametrized id carrying an absolute path, and a skip summary."""
    (tmp_path / "test_all.py").write_text(
        textwrap.dedent(f'''
        import pytest

        def test_pass(): pass
        def test_fail(): assert 1 == 2
        @pytest.fixture
        def broken(): raise RuntimeError("setup")
        def test_error(broken): pass
        def test_skip(): pytest.skip("no network")
        @pytest.mark.xfail
        def test_xfail(): assert False
        @pytest.mark.parametrize("path", ["{tmp_path}/data/file.txt", "rel/x"])
        def test_param(path): pass
    ''')
    )
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-rA", "--tb=no", "-p", "no:cacheprovider", "test_all.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    return run.stdout, run.returncode


LOGS = {
    "django": "test_a (m.T) ... ok\ntest_b (m.T) ... FAIL\nFAIL: test_c (m.T)\ntest_d (m.T) ... skipped 'slow'\n"
    "test_e (m.T) ... ERROR\ntest_f (m.T) ... some output\nok\n"
    "test_g (m.T) ... System check identified no issues (0 silenced)\nok\n",
    "sympy": "test_x ok\ntest_y F\ntest_w E\n________ sympy/core/tests/test_a.py:test_z ________\n",
    "matplotlib": "PASSED lib/t.py::test_click[MouseButton.LEFT]\nFAILED lib/t.py::test_b - AssertionError\n"
    "SKIPPED [2] lib/t.py:4: x\n",
    "seaborn": "tests/t.py::test_a PASSED [ 10%]\nFAILED tests/t.py::test_b\nPASSED tests/t.py::test_c\n",
    "pytest_v2": "\x1b[32mPASSED\x1b[0m tests/x.py::t1\n\x1b[31mFAILED\x1b[0m tests/x.py::t2 - boom\n"
    "tests/x.py::t3 \x1b[32mPASSED\x1b[0m\n",
}


def ours(requests, tmp_path):
    path = tmp_path / "requests.json"
    path.write_text(json.dumps(requests))
    script = f"""
      import {{ readFileSync }} from 'node:fs';
      import {{ parsers }} from '{REPO}/dist/src/eval/grade/log-parsers.js';
      import {{ statusesFromLog, testsReport, resolution }} from '{REPO}/dist/src/eval/grade/grading.js';
      const names = {{ parse_log_pytest: 'pytest', parse_log_pytest_options: 'pytest-options',
        parse_log_pytest_v2: 'pytest-v2', parse_log_django: 'django', parse_log_sympy: 'sympy',
        parse_log_matplotlib: 'matplotlib', parse_log_seaborn: 'seaborn' }};
      const out = JSON.parse(readFileSync(process.argv[1], 'utf8')).map((r) => {{
        const parse = parsers[names[r.parser]];
        const map = parse(r.log);
        const judged = statusesFromLog(r.wrapped, parse);
        const report = testsReport(map, r.f2p, r.p2p);
        return {{ map: Object.fromEntries(map), report, resolution: resolution(report), valid: 'map' in judged,
          judged: 'map' in judged ? Object.fromEntries(judged.map) : {{}} }};
      }});
      process.stdout.write(JSON.stringify(out));
    """
    res = subprocess.run(["node", "--input-type=module", "-e", script, str(path)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def official(requests):
    python = os.environ.get("ALIGHT_SWEBENCH_PYTHON")
    assert python, (
        "ALIGHT_SWEBENCH_PYTHON is not set: run through npm test "
        "(test/e2e/python.test.ts makes the swebench virtualenv)"
    )
    script = textwrap.dedent("""
        import json, sys, tempfile, types
        from swebench.harness.log_parsers import PARSER_REGISTRY
        from swebench.harness.grading import get_eval_tests_report, get_resolution_status, get_logs_eval
        out = []
        for r in json.load(sys.stdin):
            parse = PARSER_REGISTRY[r["parser"]]
            sm = parse(r["log"], None)
            report = get_eval_tests_report(sm, {"FAIL_TO_PASS": r["f2p"], "PASS_TO_PASS": r["p2p"]})
            with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as f:
                f.write(r["wrapped"])
            judged, valid = get_logs_eval(types.SimpleNamespace(log_parser=r["parser"]), f.name)
            out.append({"map": sm, "report": {k: report[k] for k in ("FAIL_TO_PASS", "PASS_TO_PASS")},
                        "resolution": get_resolution_status(report), "valid": valid, "judged": judged})
        json.dump(out, sys.stdout)
    """)
    res = subprocess.run([python, "-c", script], input=json.dumps(requests), capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def cases(tmp_path):
    log, code = real_pytest_log(tmp_path)

    def wrap(body, exit_code=None):
        return f"+ : '{START}'\n{body}\n+ : '{END}'\n" + ("" if exit_code is None else f"{EXIT}: {exit_code}\n")

    out = []
    for parser in ["parse_log_pytest", "parse_log_pytest_options", "parse_log_pytest_v2"]:
        out.append(
            {
                "name": f"real pytest log, {parser}",
                "parser": parser,
                "log": log,
                "wrapped": wrap(log, code),
                "f2p": ["test_all.py::test_pass", "test_all.py::test_skip", "test_all.py::test_xfail"],
                "p2p": ["test_all.py::test_fail", "test_all.py::test_param[rel/x]"],
            }
        )
    f2p = {
        "django": ["test_a (m.T)", "test_f (m.T)", "test_g (m.T)"],
        "sympy": ["test_x"],
        "matplotlib": ["lib/t.py::test_click[1]"],
        "seaborn": ["tests/t.py::test_a", "tests/t.py::test_c"],
        "pytest_v2": ["tests/x.py::t1", "tests/x.py::t3"],
    }
    for name, text in LOGS.items():
        parser = f"parse_log_{name}"
        out.append({"name": name, "parser": parser, "log": text, "wrapped": wrap(text, 0), "f2p": f2p[name], "p2p": []})
    out.append(
        {
            "name": "a conftest printing PASSED while pytest failed",
            "parser": "parse_log_pytest",
            "log": "PASSED t.py::a",
            "wrapped": wrap("PASSED t.py::a", 1),
            "f2p": ["t.py::a"],
            "p2p": [],
        }
    )
    out.append(
        {
            "name": "no markers",
            "parser": "parse_log_pytest",
            "log": "PASSED t.py::a",
            "wrapped": "PASSED t.py::a\n",
            "f2p": ["t.py::a"],
            "p2p": [],
        }
    )
    out.append(
        {
            "name": "patch apply failed",
            "parser": "parse_log_pytest",
            "log": "PASSED t.py::a",
            "wrapped": ">>>>> Patch Apply Failed\n" + wrap("PASSED t.py::a", 0),
            "f2p": ["t.py::a"],
            "p2p": [],
        }
    )
    out.append(
        {
            "name": "truncated parametrized id",
            "parser": "parse_log_pytest",
            "log": "PASSED t.py::test_g[log(photon)]",
            "wrapped": wrap("PASSED t.py::test_g[log(photon)]", 0),
            "f2p": ["t.py::test_g[log(photon"],
            "p2p": [],
        }
    )
    return out


def test_parsers_and_grading_agree_with_the_official_swebench_package(tmp_path):
    requests = cases(tmp_path)
    mine, theirs = ours(requests, tmp_path), official(requests)
    for request, a, b in zip(requests, mine, theirs):
        assert a["map"] == b["map"], request["name"]
        assert a["report"] == b["report"], request["name"]
        assert a["resolution"] == b["resolution"], request["name"]
        assert a["valid"] == b["valid"] and a["judged"] == b["judged"], request["name"]
    # The cases cover what they claim: every status, a refused spoof, a resolved and an unresolved instance.
    assert {s for r in theirs for s in r["map"].values()} == {"PASSED", "FAILED", "ERROR", "SKIPPED", "XFAIL"}
    assert [r["valid"] for r in theirs[-4:]] == [False, False, False, True]
    assert {r["resolution"] for r in theirs} >= {"RESOLVED_FULL", "RESOLVED_NO"}
