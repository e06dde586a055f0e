"""`mosaic categorize --explain` and `--text`, in a real process on a runtime log and a bad one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from mosaic.config import Config
from mosaic.logfile import categorize_file
from mosaic_testing.logs import TEST_DATA

MOSAIC = Path(sys.executable).with_name("mosaic")
LOG = TEST_DATA / "darshan-logs-runtime" / "darshan-main" / "pub_dxt_cadence.darshan"


def categorize(*args: str, status: int = 0) -> list[str]:
    """The command's output lines; exit status 1 when any log was evicted."""
    done = subprocess.run([str(MOSAIC), "categorize", *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == status, done.stderr
    return done.stdout.splitlines()


def test_explain_adds_reasons_to_each_json_line(tmp_path):
    bad = tmp_path / "bad.darshan"
    bad.write_bytes(b"not a log")
    plain, plain_bad = categorize(str(LOG), str(bad), status=1)
    explained, explained_bad = map(json.loads, categorize("--explain", str(LOG), str(bad), status=1))
    assert json.loads(plain) == categorize_file(LOG, Config())  # the default output is unchanged
    assert "reasons" not in json.loads(plain)
    assert {k: v for k, v in explained.items() if k != "reasons"} == json.loads(plain)
    assert explained == categorize_file(LOG, Config(), explain=True)
    assert explained_bad == json.loads(plain_bad)  # an eviction has no reasons to give
    # its DXT requests every 0.25 s: a cluster refused by the 1 s minimum period
    refused = [r for r in explained["reasons"] if not r["given"]]
    assert [(r["label"], r["rule"]) for r in refused] == [("write_periodic", "3.4")]


def test_text_prints_sentences():
    lines = categorize("--text", str(LOG))
    assert lines[0] == f"{LOG}: read_insignificant write_after_start_before_end metadata_insignificant_load"
    assert lines[3] == (
        "  - write periodic not given: mean shift finds 0 of 40 segments in periodic clusters "
        "(0 %, under 75 %); refused: 40 segments every 0.25 s, faster than the 1 s minimum period  [SPEC 3.4]"
    )
    assert len(lines) == 5 and all(line.startswith("  + ") for line in lines[1:3] + lines[4:])
