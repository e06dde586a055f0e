"""Build a small store with the mosaic code found first on ``sys.path`` (an old checkout).

    PYTHONPATH=OLD_CHECKOUT .venv/bin/python tests/data/stores/build.py OUT.sqlite

What it holds (tests/corpus/test_store_layouts.py checks each upgraded store holds it all):
``mosaic run --all-runs`` over three real logs of tests/data (three groups), then the
same three logs posted as the service records them (``posted/sha256-...`` names; before
layout 3 each counted a second time), then two hand-made runs posted under one more
group. The store is left as one file (journal_mode=DELETE). Kept here, with the commit
that wrote each, in tests/data/PROVENANCE.md; never rebuilt by the tests.
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path

from mosaic import categorize
from mosaic.config import Config
from mosaic.corpus.pipeline import run
from mosaic.corpus.store import Store

HERE = Path(__file__).resolve().parent
LOGS = ("pub_ckpt_newfile_7s.darshan", "pub_heatmap_append_7s.darshan", "pub_stdio_5s.darshan")
REAL = HERE.parent / "darshan-logs-runtime" / "darshan-main"


def hand_made(name: str, job_id: str, write: float, start: str) -> dict:
    return {
        "file": name,
        "status": "ok",
        "job": {
            "uid": 4242,
            "job_id": job_id,
            "application": "/opt/hand/made",
            "exe": "/opt/hand/made -x",
            "run_time": 60.0,
            "start": start,
        },
        "categories": ["write_steady"],
        "read": {"bytes": 0.0, "periodicity": {}},
        "write": {"bytes": write, "periodicity": {}},
        "metadata": {"peak_per_second": 3.0},
    }


def main(out: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="mosaic-store-layouts-") as tmp:
        logs = Path(tmp) / "logs"
        logs.mkdir()
        for name in LOGS:
            shutil.copy(REAL / name, logs / name)
        result = Path(tmp) / "out"
        run([logs], result, Config(all_runs=True), workers=0)
        with Store(result / "store.sqlite") as store:
            for name in LOGS:
                data = (REAL / name).read_bytes()
                posted = dict(categorize(str(REAL / name)))
                posted["file"] = "posted/sha256-" + hashlib.sha256(data).hexdigest()[:32]
                store.record(posted)
            store.record(hand_made("hand-1.darshan", "9001", 5e8, "2019-03-01T10:00:00Z"))
            store.record(hand_made("hand-2.darshan", "9002", 9e8, "2019-03-02T10:00:00Z"))
        db = sqlite3.connect(result / "store.sqlite")
        db.execute("PRAGMA journal_mode=DELETE")
        db.close()
        shutil.copy(result / "store.sqlite", out)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
