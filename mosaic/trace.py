"""Trace: one job's cleaned I/O as columnar numpy arrays.

A Trace is what every analysis sees: job facts, one row per I/O operation
(SPEC 3.3 step 1) and one row per file record for metadata requests
(SPEC 3.7). It is small and cheap to pickle to a dispy worker and back.
Building it from a :class:`~mosaic.darshan.formats.DarshanLog` applies the
mount / pseudo-file filter and record-level cleaning (SPEC 2, 3.1).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

READ, WRITE = 0, 1
DIRECTIONS = {READ: "read", WRITE: "write"}

# One row per operation: a record's traffic in one direction, or a DXT segment.
OPS_DTYPE = np.dtype([
    ("start", "f8"), ("end", "f8"),  # seconds from job start
    ("bytes", "f8"),
    ("ranks", "i8"),  # ranks it stands for: nprocs for a shared record, else 1
    ("direction", "i1"),  # READ or WRITE
])

# One row per kept file record: what its metadata requests are and when.
META_DTYPE = np.dtype([
    ("opens", "f8"), ("seeks", "f8"),
    ("open_start", "f8"), ("open_end", "f8"),
    ("close_start", "f8"), ("close_end", "f8"),
])


@dataclass
class Trace:
    file: str
    job: dict  # uid, job_id, exe, application, nprocs, start (ISO), run_time, version
    ops: np.ndarray  # OPS_DTYPE
    meta: np.ndarray  # META_DTYPE
    partial: bool = False
    dropped_records: int = 0
    has_dxt: bool = False
    info: dict = field(default_factory=dict)  # free-form reader facts (modules, format)

    @property
    def run_time(self) -> float:
        return float(self.job["run_time"])

    def direction(self, direction: int) -> np.ndarray:
        """Operations of one direction, sorted by start time."""
        sel = self.ops[self.ops["direction"] == direction]
        return sel[np.argsort(sel["start"], kind="stable")]

    @property
    def total_bytes(self) -> float:
        return float(self.ops["bytes"].sum())

    def group_key(self, group_by: str = "app") -> str:
        """SPEC 3.2 dedup key: "uid:application" or "uid:whole command line"."""
        return group_key(self.job, group_by)


def group_key(job: dict, group_by: str = "app") -> str:
    what = job["exe"] if group_by == "cmdline" else job["application"]
    return f"{job['uid']}:{what}"
