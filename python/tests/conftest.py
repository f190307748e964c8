"""Fixtures shared by alight's Python tests: the repository, the built CLI, and a run recorded through the gateway."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))  # alight_worker
sys.path.insert(0, str(REPO / "python" / "reference"))


def alight(*args, check=True):
    """Runs the built CLI (npm run build first) as a user would."""
    res = subprocess.run(
        ["node", str(REPO / "bin" / "alight.js"), *map(str, args)], capture_output=True, text=True, cwd=REPO
    )
    if check and res.returncode != 0:
        raise AssertionError(f"alight {' '.join(map(str, args))} exited {res.returncode}:\n{res.stderr}")
    return res


@pytest.fixture(scope="session")
def recorded_run(tmp_path_factory):
    """{"db", "run"}: 12 rollouts recorded from the openai-SDK harness (see test/helpers/record-reference-run.ts)."""
    out = subprocess.run(
        ["node", "--import", "tsx", "test/helpers/record-reference-run.ts", str(tmp_path_factory.mktemp("recorded"))],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "NODE_NO_WARNINGS": "1"},
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)
