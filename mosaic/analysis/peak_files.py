"""The files behind seconds of metadata requests: which records made a peak, or the spikes (SPEC 3.7).

A peak of 994 requests in one second says nothing of where to look; the
records' own share of that second does (issue 46 item 16). Several spikes
ask the same of all their seconds together: the peak second of
pub_meta_dense is 61 files at 1.7 % each, e3sm's four spikes are its input
file's collective opens and its output's (2026-11-29). Built only when a
reason or the job page asks, from the trace's metadata rows and their
record ids: categorizing never pays for it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypedDict

import numpy as np

from mosaic.analysis.metadata import requests_in_seconds
from mosaic.darshan.formats import STD_STREAM_IDS
from mosaic.trace import Trace


class PeakFile(TypedDict):
    """One file's part of some seconds' requests."""

    record_id: int
    name: str  # its path; "<STDIN>" etc. for a standard stream; "record ID" when anonymized or nameless
    requests: float  # its requests in those seconds, over every rank's record of it
    share: float  # of the seconds' requests


class PeakFiles(TypedDict):
    """The files behind some seconds, the most requests first."""

    seconds: list[int]
    requests: float  # the seconds' requests, every file's
    files: list[PeakFile]  # at most the ``top`` asked for
    others: int  # files with requests in those seconds not listed


def peak_files(trace: Trace, seconds: Sequence[int], top: int, *, metadata_seeks: bool) -> PeakFiles:
    """The ``top`` files with the most requests in ``seconds`` together (ties: the lower
    record id first). Rows of one file (its ranks' records, a shared record's collective
    row) add up."""
    ids = trace.meta_ids
    found: PeakFiles = {"seconds": [int(k) for k in seconds], "requests": 0.0, "files": [], "others": 0}
    if not len(ids) or len(ids) != len(trace.meta):
        return found
    per_row = requests_in_seconds(
        trace.meta, np.asarray(seconds, dtype=np.int64), trace.run_time, metadata_seeks=metadata_seeks
    )
    busy = per_row > 0
    files, at = np.unique(ids[busy], return_inverse=True)
    requests = np.bincount(at, weights=per_row[busy], minlength=len(files))
    total = float(requests.sum())
    order = np.lexsort((files, -requests))[:top]
    anonymized = _anonymized(trace.names)
    found["requests"] = total
    found["files"] = [
        {
            "record_id": int(files[i]),
            "name": file_name(int(files[i]), trace.names, anonymized),
            "requests": float(requests[i]),
            "share": float(requests[i]) / total,
        }
        for i in order.tolist()
    ]
    found["others"] = len(files) - len(order)
    return found


def file_name(record_id: int, names: Mapping[int, str], anonymized: bool) -> str:
    """A record's file as people read it: a standard stream by its id whatever the log
    calls it, the log's name unless it is anonymized, else ``record ID``."""
    stream = STD_STREAM_IDS.get(record_id)
    if stream is not None:
        return stream
    name = "" if anonymized else names.get(record_id, "")
    return name or f"record {record_id}"


def _anonymized(names: Mapping[int, str]) -> bool:
    """Whether a log's names are replaced: it names a standard stream otherwise than
    Darshan does (darshan-convert's anonymization hashes every name, ``<STDIN>`` too)."""
    return any(names.get(rid, name) not in ("", name) for rid, name in STD_STREAM_IDS.items())
