"""A small summary.json built from CorpusStats with chosen label sets, and a hand-built trace."""

import json

import numpy as np
import pytest

from mosaic.config import Config
from mosaic.corpus.stats import CorpusStats, stability_summary
from mosaic.trace import META_DTYPE, OPS_DTYPE, READ, WRITE, Trace

# (labels, runs in the group): a representative counts 1 in "single run", `runs` in "all runs".
TRACES = [
    (["read_on_start", "write_on_end", "metadata_high_spike"], 40),
    (["read_on_start", "write_on_end", "metadata_insignificant_load"], 3),
    (
        [
            "read_on_start",
            "write_periodic",
            "write_periodic_minute",
            "write_periodic_low_busy_time",
            "write_steady",
            "metadata_multiple_spikes",
            "metadata_high_spike",
        ],
        12,
    ),
    (["read_insignificant", "write_insignificant", "metadata_insignificant_load"], 1),
    (["read_insignificant", "write_insignificant", "metadata_insignificant_load"], 2),
    (
        [
            "read_steady",
            "write_steady",
            "write_periodic",
            "write_periodic_hour",
            "metadata_multiple_spikes",
            "metadata_high_density",
        ],
        5,
    ),
    (
        [
            "read_after_start_before_end",
            "read_periodic",
            "read_periodic_second",
            "write_insignificant",
            "metadata_insignificant_load",
        ],
        1,
    ),
    (["read_on_start_and_end", "write_unclassified", "metadata_high_spike"], 1),
]
FUNNEL = {
    "files_seen": 13,
    "non_log_files": 1,
    "logs": 12,
    "evicted": {"truncated": 2, "bad_job": 1},
    "evicted_total": 3,
    "valid": 9,
    "partial": 1,
    "groups": 8,
    "categorized": 8,
}


def make_summary(traces=TRACES, stability=(1.0, 0.97, 0.8, 0.5)) -> dict:
    stats = CorpusStats()
    for labels, runs in traces:
        stats.add(labels, 1, runs)
    config = Config()
    return {
        "funnel": FUNNEL,
        **stats.to_dict(),
        "stability": stability_summary(stability) if stability is not None else None,
        "timings": {"total_seconds": 1.0},
        "config": config.to_dict(),
        "config_hash": config.hash(),
        "mosaic_version": "0.1.0",
    }


@pytest.fixture(scope="session")
def summary_factory():
    """make_summary itself (test modules cannot import this conftest by name)."""
    return make_summary


@pytest.fixture
def summary() -> dict:
    return make_summary()


@pytest.fixture
def results_dir(tmp_path, summary):
    (tmp_path / "summary.json").write_text(json.dumps(summary))
    return tmp_path


RUN_TIME = 1000.0


def checkpointing_trace() -> Trace:
    """One 200 MB read over [0, 100] s; 10 writes of 1 GB by 8 ranks, 20 s long, every 100 s
    from t = 50 s; 300 opens at t = 10 s."""
    ops = np.zeros(11, OPS_DTYPE)
    ops[0] = (0.0, 100.0, 2e8, 4, READ)
    starts = 50.0 + 100.0 * np.arange(10)
    ops["start"][1:], ops["end"][1:] = starts, starts + 20.0
    ops["bytes"][1:], ops["ranks"][1:], ops["direction"][1:] = 1e9, 8, WRITE
    meta = np.zeros(1, META_DTYPE)
    meta[0] = (300, 0, 10.0, 10.0, 0.0, 0.0)
    job = {
        "uid": 1,
        "job_id": "1",
        "exe": "/bin/ckpt",
        "application": "/bin/ckpt",
        "nprocs": 8,
        "start": "2019-01-01T00:00:00Z",
        "run_time": RUN_TIME,
    }
    return Trace(file="ckpt.darshan", job=job, ops=ops, meta=meta)


@pytest.fixture(scope="session")
def trace_factory():
    """checkpointing_trace itself."""
    return checkpointing_trace
