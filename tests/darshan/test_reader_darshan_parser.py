"""Our reader against darshan's own parsers, on logs darshan-runtime wrote.

For every log of ``tests/data/darshan-logs-runtime/`` (darshan's main branch:
format 3.41, DXT_POSIX v2, which pydarshan 3.5.0 cannot read; darshan 2.3.1:
gzip 2.06 logs, which pydarshan never read), the ``darshan-parser`` and
``darshan-dxt-parser`` text of the same build is the reference. Values are
compared as the tools printed them (``parser_text``): integers exactly,
doubles at the printed precision.

Where our reader departs from the text on purpose, the test asserts the
transformation, not a tolerance:
- 2.x keeps one open and one close timestamp: our POSIX v4 open_start ==
  open_end == CP_F_OPEN_TIMESTAMP, close_start == close_end ==
  CP_F_CLOSE_TIMESTAMP;
- a 2.x record with no reads (writes) has read (write) start and end 0: we
  bound its traffic by open..close instead;
- 2.x timestamps at or past the job's start (absolute, from some runtimes)
  are made job-relative (2.3.1 already writes them relative);
- darshan-parser 2.x prints a name suffix as ``...`` + its 15 characters.
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from mosaic.darshan import formats as F
from mosaic.darshan.reader import read_log
from mosaic_testing.parser_text import (
    COUNTER_NAMES,
    DXT_TIME,
    FLOAT,
    LEGACY_MODULE,
    LEGACY_NAMES,
    LEGACY_STREAM_NAMES,
    RUN_TIME,
    RUNTIME_LOGS,
    TIMESTAMP_NAMES,
    expected_counter,
    read_dxt_text,
    read_parser_text,
)

LOGS = sorted(p for p in RUNTIME_LOGS.glob("*/*.darshan*") if not p.name.endswith(".txt"))
DXT_LOGS = [p for p in LOGS if p.with_name(p.name.split(".darshan")[0] + ".dxt.txt").exists()]
V3_LOGS = [p for p in LOGS if p.parent.name == "darshan-main"]
LEGACY_LOGS = [p for p in LOGS if p.parent.name == "darshan-2.3.1"]
pytestmark = pytest.mark.skipif(not LOGS, reason="tests/data/darshan-logs-runtime not present")
MODULES = {"POSIX": F.POSIX, "STDIO": F.STDIO, "MPI-IO": F.MPIIO}


def beside(log: Path, suffix: str) -> Path:
    return log.with_name(log.name.split(".darshan")[0] + suffix)


def ids(logs: list[Path]) -> list[str]:
    return [f"{p.parent.name}/{p.name.split('.darshan')[0]}" for p in logs]


def test_every_log_has_its_parser_text():
    """Counted from the folders: a log without its text (or a text without its log) fails."""
    texts = sorted(RUNTIME_LOGS.glob("*/*.parser.txt"))
    assert LOGS and [beside(p, ".parser.txt") for p in LOGS] == texts
    assert len(DXT_LOGS) == len(list(RUNTIME_LOGS.glob("*/*.dxt.txt")))
    assert all(beside(p, ".parser.txt").exists() for p in LOGS)


@pytest.mark.parametrize("path", LOGS, ids=ids(LOGS))
def test_job_fields_equal_darshan_parser(path):
    text, log = read_parser_text(beside(path, ".parser.txt")), read_log(path)
    head, job = text.header, log.job
    assert job.version == head["darshan log version"]
    assert (job.uid, job.job_id, job.nprocs) == (int(head["uid"]), int(head["jobid"]), int(head["nprocs"]))
    assert (math.floor(job.start), math.floor(job.end)) == (int(head["start_time"]), int(head["end_time"]))
    if job.version.startswith("2."):  # whole seconds: end - start + 1
        assert job.run_time == int(head["run time"]) == job.end - job.start + 1
    else:
        assert RUN_TIME.format(job.run_time) == head["run time"]
    assert job.cmdline == head["exe"]
    assert job.metadata == text.metadata
    assert sorted(job.mounts) == sorted(text.mounts)
    for rid, name in text.names.items():
        if job.version.startswith("2."):
            assert name == "..." + log.names[rid], rid
        elif not name.startswith("heatmap:"):
            assert log.names[rid] == name, rid


def our_record(records: F.ModuleRecords | F.HeatmapRecords, rank: int, rid: int) -> int:
    """Row of the one record of (rank, record id)."""
    (row,) = np.flatnonzero((records.ids == rid) & (records.ranks == rank))
    return int(row)


@pytest.mark.parametrize("path", V3_LOGS, ids=ids(V3_LOGS))
def test_records_equal_darshan_parser(path):
    """Every POSIX, STDIO and MPI-IO record: every counter by position, and the
    canonical fields the pipeline uses by darshan's counter names."""
    text, log = read_parser_text(beside(path, ".parser.txt")), read_log(path)
    printed = defaultdict(set)
    for (module, rank, rid), counters in text.records.items():
        if module == "HEATMAP":
            continue
        mod = log.modules[MODULES[module]]
        printed[mod.module].add((rank, rid))
        row = our_record(mod, rank, rid)
        values = list(counters.values())
        n_c = mod.counters.shape[1]
        assert mod.counters[row].tolist() == [int(v) for v in values[:n_c]], (module, rank, rid)
        assert [FLOAT.format(v) for v in mod.fcounters[row]] == values[n_c:], (module, rank, rid)
        prefix = module.replace("-", "") + "_"
        canonical = mod.canonical()
        # where CANONICAL_INDEX looks is where darshan prints the named counter (zeros
        # in both columns would hide a wrong index from the value check alone)
        at = {name: i for i, name in enumerate(counters)}
        counter_index, fcounter_index = F.CANONICAL_INDEX[(mod.module, mod.version)]
        named = {name.removeprefix(prefix): int(value) for name, value in list(counters.items())[:n_c]}
        for field, names in COUNTER_NAMES[prefix[:-1]].items():
            index = counter_index[field]
            assert (index if isinstance(index, tuple) else (index,)) == tuple(at[prefix + n] for n in names)
            assert canonical[field][row] == expected_counter(prefix[:-1], field, named), field
        for field, name in TIMESTAMP_NAMES.items():
            assert n_c + fcounter_index[field] == at[prefix + name], field
            assert FLOAT.format(canonical[field][row]) == counters[prefix + name], field
    for mod in log.modules.values():  # and no record the parser did not print
        assert set(zip(mod.ranks.tolist(), mod.ids.tolist())) == printed[mod.module]
    assert set(log.modules) == {MODULES[m] for m, _, _ in text.records if m != "HEATMAP"}


@pytest.mark.parametrize("path", V3_LOGS, ids=ids(V3_LOGS))
def test_heatmaps_equal_darshan_parser(path):
    """Every HEATMAP record: its API, bin width and every write and read bin."""
    text, log = read_parser_text(beside(path, ".parser.txt")), read_log(path)
    h = log.heatmaps
    printed = {key: c for key, c in text.records.items() if key[0] == "HEATMAP"}
    assert len(printed) == len(h.ids) > 0
    for (_, rank, rid), counters in printed.items():
        row = our_record(h, rank, rid)
        assert h.apis[row] == text.names[rid]
        assert FLOAT.format(h.bin_seconds[row]) == counters["HEATMAP_F_BIN_WIDTH_SECONDS"]
        at, n = int(h.offsets[row]), int(h.nbins[row])
        for side, bins in (("WRITE", h.write_bins), ("READ", h.read_bins)):
            want = [int(counters[f"HEATMAP_{side}_BIN_{k}"]) for k in range(n)]
            assert bins[at : at + n].tolist() == want, (rank, rid, side)
        assert f"HEATMAP_WRITE_BIN_{n}" not in counters


@pytest.mark.parametrize("path", DXT_LOGS, ids=ids(DXT_LOGS))
def test_dxt_segments_equal_darshan_dxt_parser(path):
    """Every DXT_POSIX v2 segment, in each record's order, with its thread id."""
    blocks, log = read_dxt_text(beside(path, ".dxt.txt")), read_log(path)
    d = log.dxt_posix
    assert read_parser_text(beside(path, ".parser.txt")).header["DXT_POSIX module"].endswith("ver=2")
    assert {b.module for b in blocks} == {"X_POSIX"} and log.dxt_mpiio is None
    assert sum(len(b.segments) for b in blocks) == len(d.ids) > 0
    for block in blocks:
        mine = np.flatnonzero((d.ids == block.file_id) & (d.ranks == block.rank))
        assert int(d.is_write[mine].sum()) == block.write_count
        assert len(mine) == block.write_count + block.read_count
        assert log.names[block.file_id] == block.file_name
        assert len(set(d.thread_ids[mine].tolist())) == block.threads
        ours = [
            (bool(w), int(o), int(n), DXT_TIME.format(s), DXT_TIME.format(e), int(t))
            for w, o, n, s, e, t in zip(
                d.is_write[mine],
                d.offsets[mine],
                d.lengths[mine],
                d.starts[mine],
                d.ends[mine],
                d.thread_ids[mine],
            )
        ]
        want = [(s.is_write, s.offset, s.length, s.start, s.end, s.thread) for s in block.segments]
        assert ours == want, (block.file_id, block.rank)
        assert [s.index for s in block.segments] == list(range(block.write_count)) + list(
            range(block.read_count)
        )


def legacy_time(counters: dict[str, str], name: str, job_start: float) -> str:
    """A 2.x timestamp as we read it, printed: job-relative (absolute ones made relative)."""
    value = float(counters["CP_" + LEGACY_NAMES[name]])
    return FLOAT.format(value - job_start if value >= job_start > 0 else value)


@pytest.mark.parametrize("path", LEGACY_LOGS, ids=ids(LEGACY_LOGS))
def test_legacy_records_equal_darshan_parser_231(path):
    """Every 2.x record's canonical fields against darshan-parser 2.3.1, and the
    mount point its CP_DEVICE names."""
    text, log = read_parser_text(beside(path, ".parser.txt")), read_log(path)
    posix = log.modules[F.POSIX]
    canonical = posix.canonical()
    assert set(log.modules) == {F.POSIX}
    assert {(r, i) for _, r, i in text.records} == set(zip(posix.ranks.tolist(), posix.ids.tolist()))
    for (module, rank, rid), counters in text.records.items():
        assert module == LEGACY_MODULE
        row = our_record(posix, rank, rid)
        for field in F.CANONICAL_COUNTERS:
            names = [
                LEGACY_NAMES[field],
                *([LEGACY_STREAM_NAMES[field]] if field in LEGACY_STREAM_NAMES else []),
            ]
            assert canonical[field][row] == sum(int(counters["CP_" + name]) for name in names), field

        def at(name: str, counters: dict[str, str] = counters) -> str:
            return legacy_time(counters, name, log.job.start)

        for field in ("open_start", "open_end"):
            assert FLOAT.format(canonical[field][row]) == at("open")
        for field in ("close_start", "close_end"):
            assert FLOAT.format(canonical[field][row]) == at("close")
        for side in ("read", "write"):
            start, end = at(side + "_start"), at(side + "_end")
            if start == end == FLOAT.format(0):  # no traffic timed: open..close bounds it
                start, end = at("open"), at("close")
            got = (FLOAT.format(canonical[side + "_start"][row]), FLOAT.format(canonical[side + "_end"][row]))
            assert got == (start, end), (rank, rid, side)
        assert log.record_mounts[rid] == text.mount_points[rid]
