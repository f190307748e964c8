"""`alight data import` on Parquet written the way real exports are: by pyarrow, ZSTD-compressed, several row groups,
FAIL_TO_PASS as list<string> columns, created_at as a timestamp, plus a column alight does not interpret."""

import json
import subprocess
from datetime import datetime, timezone

import pyarrow as pa
import pyarrow.parquet as pq

from conftest import REPO, alight


def diff(path):
    return f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-a\n+b\n"


def test_pyarrow_zstd_list_columns_and_row_groups(tmp_path):
    n = 2500
    table = pa.table(
        {
            "instance_id": [f"acme__lib-{i}" for i in range(n)],
            "repo": ["acme/lib"] * n,
            "base_commit": ["a" * 40] * n,
            "patch": [diff(f"src/m{i}.py") for i in range(n)],
            "problem_statement": [
                f"Issue number {i}: the parser rejects input {i * 7} although the grammar allows it." for i in range(n)
            ],
            "FAIL_TO_PASS": pa.array([[f"tests/test_m.py::test_{i}"] for i in range(n)], type=pa.list_(pa.string())),
            "PASS_TO_PASS": pa.array([[] for _ in range(n)], type=pa.list_(pa.string())),
            "created_at": pa.array([datetime(2024, 1, 1, tzinfo=timezone.utc)] * n, type=pa.timestamp("ms", tz="UTC")),
            "eval_type": ["pass_and_fail"] * n,
        }
    )
    path = tmp_path / "export.parquet"
    pq.write_table(table, path, compression="zstd", row_group_size=1000)
    assert pq.ParquetFile(path).num_row_groups == 3
    db = tmp_path / "a.db"
    summary = json.loads(alight("data", "import", path, "--db", db, "--json").stdout)
    assert summary["added"] == n and summary["invalid"] == 0
    out = tmp_path / "kept.jsonl"
    alight("data", "export", "--out", out, "--db", db)
    rows = [json.loads(line) for line in open(out)]
    assert [r["instance_id"] for r in rows] == [f"acme__lib-{i}" for i in range(n)]
    first = rows[1]
    assert json.loads(first["FAIL_TO_PASS"]) == ["tests/test_m.py::test_1"] and json.loads(first["PASS_TO_PASS"]) == []
    assert first["created_at"] == "2024-01-01T00:00:00.000Z"
    assert first["eval_type"] == "pass_and_fail"  # kept though alight does not interpret it


def test_a_garbled_footer_is_refused_not_hung(tmp_path):
    """One byte of pyarrow's footer changed, the child count of the PASS_TO_PASS list group made negative: the import
    looped forever (hyparquet's GeoParquet pass walks the schema by those counts); now it is refused, storing
    nothing."""
    table = pa.table(
        {
            "instance_id": ["acme__lib-1"],
            "repo": ["acme/lib"],
            "patch": [diff("src/m.py")],
            "FAIL_TO_PASS": pa.array([["tests/test_m.py::test_1"]], type=pa.list_(pa.string())),
            "PASS_TO_PASS": pa.array([[]], type=pa.list_(pa.string())),
        }
    )
    path = tmp_path / "garbled.parquet"
    pq.write_table(table, path)
    data = bytearray(path.read_bytes())
    footer = len(data) - 8 - int.from_bytes(data[-8:-4], "little")
    # the group's name, then its num_children field (thrift compact: i32, zigzag 1 = 0x02; 0x03 is -2)
    at = data.index(b"PASS_TO_PASS\x15\x02", footer) + len(b"PASS_TO_PASS\x15")
    data[at] = 0x03
    path.write_bytes(bytes(data))
    db = tmp_path / "a.db"
    res = subprocess.run(
        ["node", str(REPO / "bin" / "alight.js"), "data", "import", str(path), "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 3, res.stderr
    assert "garbled.parquet is a damaged Parquet file" in res.stderr and "nothing was imported" in res.stderr
    assert "    at " not in res.stderr


def test_a_page_that_fails_its_checksum_is_refused(tmp_path):
    """pyarrow asked to record page checksums, one letter of a patch changed: still valid text, so only the page's CRC
    tells; the import is refused rather than storing the altered patch."""
    table = pa.table(
        {
            "instance_id": [f"acme__lib-{i}" for i in range(3)],
            "repo": ["acme/lib"] * 3,
            "patch": [diff(f"src/m{i}.py") for i in range(3)],
            "FAIL_TO_PASS": pa.array([["tests/test_m.py::test_1"]] * 3, type=pa.list_(pa.string())),
        }
    )
    path = tmp_path / "altered.parquet"
    pq.write_table(table, path, compression="none", write_page_checksum=True)
    data = bytearray(path.read_bytes())
    data[data.index(b"+b\n")] = ord("-")
    path.write_bytes(bytes(data))
    res = alight("data", "import", path, "--db", tmp_path / "a.db", check=False)
    assert res.returncode == 3, res.stderr
    assert "column patch" in res.stderr and "does not match its checksum" in res.stderr
