"""`mosaic categorize --explain` and `--text`, in a real process on a runtime log and a bad one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from mosaic import __version__
from mosaic.config import Config
from mosaic.logfile import categorize_file
from mosaic_testing.logs import TEST_DATA

MOSAIC = Path(sys.executable).with_name("mosaic")
LOG = TEST_DATA / "darshan-logs-runtime" / "darshan-2.3.1" / "pub_two_series.darshan.gz"


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
    made = {"mosaic_version": __version__, "config_hash": Config().hash()}  # on every object
    assert json.loads(plain) == {**categorize_file(LOG, Config()), **made}  # no reasons by default
    assert "reasons" not in json.loads(plain)
    assert {k: v for k, v in explained.items() if k != "reasons"} == json.loads(plain)
    assert explained == {**categorize_file(LOG, Config(), explain=True), **made}
    assert explained_bad == json.loads(plain_bad)  # an eviction has no reasons to give
    # its quarters' CV, 0.274, is within 20 % of steady's 0.25: the one close call not given
    refused = [r for r in explained["reasons"] if not r["given"]]
    assert [(r["label"], r["rule"], r["close"]) for r in refused] == [("write_steady", "3.6", True)]
    closes = [r["label"] for r in explained["reasons"] if r["given"] and r["close"]]
    assert closes == ["write_unclassified"]  # unclassified, with steady that near


def test_text_prints_sentences():
    lines = categorize("--text", str(LOG))
    assert lines[0] == (
        f"{LOG}: read_insignificant write_unclassified write_periodic write_periodic_minute "
        "write_periodic_low_busy_time metadata_insignificant_load"
    )
    assert lines[2:4] == [
        "  + write unclassified (close call): quarters 21/37/21/21 % of 1.34 GB match none of SPEC 3.6's "
        "rules; the nearest, steady, misses: the CV of the four quarters is 0.274, not under 0.25  "
        "[SPEC 3.6]",
        "  - write steady not given: quarters 21/37/21/21 % of 1.34 GB; the CV of the four quarters is "
        "0.274, not under 0.25  [SPEC 3.6]",
    ]
    assert len(lines) == 8 and all(line.startswith("  + ") for line in lines[1:3] + lines[4:])
