"""The step at the end of `mosaic run` (SPEC 3.11): its summary entry, and what it wrote."""

import json
import shutil

from mosaic.config import Config
from mosaic.corpus import pipeline
from mosaic.corpus.store import Store
from mosaic_testing.contention_tables import INTERFERENCE


def test_mosaic_run_analyses_contention_when_the_inputs_are_there(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    for name in sorted(p.name for p in (INTERFERENCE / "logs").iterdir())[:3]:
        shutil.copy(INTERFERENCE / "logs" / name, logs / name)
    config = Config(contention_min_runs=8)
    summary = pipeline.run([logs], tmp_path / "out", config, workers=0)
    written = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert written["timings"]["contention"] >= 0  # the step's seconds
    # three runs of one or two groups: each group below contention_min_runs
    assert summary["contention"] == written["contention"]
    assert summary["contention"]["status"] == "ok"
    with Store(tmp_path / "out" / "store.sqlite") as store, store._snapshot() as db:
        labels = {row[0] for row in db.execute("SELECT label FROM app_contention")}
    assert labels == {"not enough runs"}
