"""Traces built by hand for the analysis tests: one job, operations and metadata rows given."""

from collections.abc import Iterable
from typing import Any

import numpy as np

from mosaic.trace import META_DTYPE, OPS_DTYPE, Trace

JOB: dict[str, Any] = {
    "uid": 7,
    "job_id": "42",
    "exe": "/bin/app -x 1",
    "application": "/bin/app",
    "nprocs": 4,
    "start": "2019-03-14T10:00:00Z",
    "run_time": 3600.0,
    "version": "3.10",
}


def make_trace(
    ops: Iterable[tuple] = (), meta: Iterable[tuple] = (), run_time: float = 3600.0, **extra: Any
) -> Trace:
    """A trace of JOB lasting ``run_time`` with these operation and metadata rows
    (``extra``: the other Trace fields, e.g. ``heatmap``)."""
    return Trace(
        "job.darshan",
        dict(JOB, run_time=run_time),
        np.array(list(ops), dtype=OPS_DTYPE),
        np.array(list(meta), dtype=META_DTYPE),
        **extra,
    )
