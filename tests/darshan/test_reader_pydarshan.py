"""Our reader against pydarshan (the reference) on every real and example log.

pydarshan runs once, in a subprocess (it can segfault), over all logs; the
dump is compared field by field here. Known differences, each checked
explicitly below rather than skipped:
- pydarshan drops records whose id has no name record; we keep them, so we
  compare our records restricted to named ids.
- darshan-util converts records of older module versions (POSIX v1/v3,
  STDIO v1, MPI-IO v1/v2) to the current layout; for those we compare the
  canonical counters MOSAIC uses, by counter name.
- POSIX v1 (3.00 logs) has one open and one close timestamp; darshan-util
  reports the missing open end / close start as -1, we report the
  open / close instant (start == end), which the metadata analysis needs.
- A log without a mount table gives exe == "" in pydarshan (dxt.darshan,
  whose command line fills the whole job region); we keep the command line.
- The mount table order: both list the longest mount point first; ties may
  come in another order, so mounts are compared as lists sorted the same way.
"""

import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mosaic.config import Config
from mosaic.darshan import formats as F
from mosaic.darshan.reader import read_log
from mosaic.errors import LogError
from mosaic.trace import build_trace
from mosaic_testing import pydarshan_oracle
from mosaic_testing.logs import pydarshan_example_logs, real_logs
from mosaic_testing.parser_text import COUNTER_NAMES, TIMESTAMP_NAMES, expected_counter

ORACLE = Path(pydarshan_oracle.__file__)  # run as a script: pydarshan can crash its process
ALL_LOGS = [str(p) for p in real_logs() + pydarshan_example_logs()]

# What we expect where a log is not read as ok (by file name).
EXPECTED_EVICTIONS = {"empty_log.darshan": "no_io_modules"}  # header + job only
EXPECTED_PARTIAL = {  # partial bit set in the header, by module
    "imbalanced-io.darshan": (F.POSIX,),
    "partial_data_dxt.darshan": (F.DXT_POSIX, F.DXT_MPIIO),
    "partial_data_stdio.darshan": (F.STDIO,),
}

# darshan-util's counter-name prefix of each module (names: parser_text.COUNTER_NAMES).
PREFIXES = {F.POSIX: "POSIX", F.STDIO: "STDIO", F.MPIIO: "MPIIO"}
V1_INSTANTS = {
    (F.POSIX, 1, "open_end"),
    (F.POSIX, 1, "close_start"),
    (F.MPIIO, 1, "open_end"),
    (F.MPIIO, 1, "close_start"),
    (F.MPIIO, 2, "open_end"),
    (F.MPIIO, 2, "close_start"),
}
CURRENT_VERSIONS = {F.POSIX: 4, F.STDIO: 2, F.MPIIO: 3}
PYD_MODULES = {"POSIX": F.POSIX, "STDIO": F.STDIO, "MPI-IO": F.MPIIO}


@pytest.fixture(scope="module")
def oracle(tmp_path_factory, shared_logs):  # counts below include the real logs
    if not ALL_LOGS:
        pytest.skip("no logs")
    out = tmp_path_factory.mktemp("oracle") / "pydarshan.pkl"
    subprocess.run([sys.executable, str(ORACLE), str(out), *ALL_LOGS], check=True, timeout=300)
    with open(out, "rb") as fh:
        return pickle.load(fh)


def _read(path):
    name = Path(path).name
    if name in EXPECTED_EVICTIONS:
        with pytest.raises(LogError) as err:
            read_log(path)
        assert err.value.reason == EXPECTED_EVICTIONS[name]
        return None
    return read_log(path)


@pytest.mark.parametrize("path", ALL_LOGS, ids=lambda p: Path(p).name[:40])
def test_status_of_every_log(path):
    log = _read(path)
    if log is None:
        return
    assert log.job.partial == (Path(path).name in EXPECTED_PARTIAL)
    assert log.partial_modules == EXPECTED_PARTIAL.get(Path(path).name, ())
    trace = build_trace(log, path, Config())  # these real logs need no cleaning
    assert trace.dropped_records == 0 and trace.info["dropped_segments"] == 0
    assert np.isfinite(trace.ops["start"]).all() and (trace.ops["bytes"] > 0).all()


def _same(a, b):
    return np.array_equal(a, b, equal_nan=True)


def test_job_fields_equal_pydarshan(oracle):
    compared = 0
    for path in ALL_LOGS:
        ref, log = oracle[path], _read(path)
        if log is None:
            continue
        job = ref["job"]
        assert log.job.uid == job["uid"], path
        assert log.job.job_id == job["jobid"], path
        assert log.job.nprocs == job["nprocs"], path
        assert log.job.version == job["log_ver"], path
        assert log.job.start == pytest.approx(job["start_time_sec"] + job["start_time_nsec"] * 1e-9)
        assert log.job.end == pytest.approx(job["end_time_sec"] + job["end_time_nsec"] * 1e-9)
        assert log.job.run_time == pytest.approx(job["run_time"]), path
        assert log.job.metadata == job["metadata"], path
        if log.job.mounts:
            assert log.job.cmdline == ref["exe"], path
        else:  # darshan-util quirk: no mount table -> empty exe (dxt.darshan)
            assert ref["exe"] == "" and log.job.cmdline, path
        assert sorted(log.job.mounts) == sorted(ref["mounts"]), path
        assert [len(m) for m, _ in log.job.mounts] == [len(m) for m, _ in ref["mounts"]]
        assert log.names == ref["names"], path
        compared += 1
    assert compared == len(ALL_LOGS) - 1  # all but the empty log


def _named(log, records):
    keep = np.isin(records.ids, np.fromiter(log.names, dtype=np.uint64, count=len(log.names)))
    return keep


def test_records_equal_pydarshan(oracle):
    full, canonical = 0, 0
    for path in ALL_LOGS:
        ref, log = oracle[path], _read(path)
        if log is None:
            continue
        assert set(PYD_MODULES[m] for m in ref["modules"]) == set(log.modules), path
        for pyd_name, mod in PYD_MODULES.items():
            if pyd_name not in ref["modules"]:
                continue
            want, mine = ref["modules"][pyd_name], log.modules[mod]
            keep = _named(log, mine)
            assert np.array_equal(mine.ids[keep], want["ids"]), path
            assert np.array_equal(mine.ranks[keep], want["ranks"]), path
            if mine.version == CURRENT_VERSIONS[mod]:
                assert _same(mine.counters[keep], want["counters"]), (path, pyd_name)
                assert _same(mine.fcounters[keep], want["fcounters"]), (path, pyd_name)
                full += 1
            if mod in PREFIXES:  # the canonical fields of every version, by counter name
                prefix = PREFIXES[mod] + "_"
                counter_names = ref["counter_names"][pyd_name]
                ours = mine.canonical()
                names = [name.removeprefix(prefix) for name in counter_names["counters"]]
                named = dict(zip(names, want["counters"].T))
                for field in COUNTER_NAMES[PREFIXES[mod]]:
                    expected = expected_counter(PREFIXES[mod], field, named) + np.zeros(len(want["ids"]), int)
                    assert _same(ours[field][keep], expected), (path, field)
                for field, pyd in TIMESTAMP_NAMES.items():
                    col = counter_names["fcounters"].index(prefix + pyd)
                    if (mod, mine.version, field) in V1_INSTANTS:
                        assert (want["fcounters"][:, col] == -1).all()
                        continue
                    assert _same(ours[field][keep], want["fcounters"][:, col]), (path, field)
                canonical += 1
    assert full > 100 and canonical > 200


@pytest.mark.parametrize("key, attribute, logs", [("dxt", "dxt_posix", 20), ("dxt_mpiio", "dxt_mpiio", 12)])
def test_dxt_segments_equal_pydarshan(oracle, key, attribute, logs):
    """Every DXT_POSIX (v1) and DXT_MPIIO (v1, v2) segment of the real logs; these
    versions record no thread: DXT_NO_THREAD."""
    compared = 0
    for path in ALL_LOGS:
        ref, log = oracle[path], _read(path)
        if log is None or key not in ref:
            assert log is None or getattr(log, attribute) is None, path
            continue
        d = getattr(log, attribute)
        ours = sorted(
            zip(
                d.ids.tolist(),
                d.ranks.tolist(),
                d.is_write.tolist(),
                d.offsets.tolist(),
                d.lengths.tolist(),
                d.starts.tolist(),
                d.ends.tolist(),
            )
        )
        assert ours == sorted(ref[key]), path
        assert (d.thread_ids == F.DXT_NO_THREAD).all(), path
        compared += 1
    assert compared == logs


def test_heatmaps_equal_pydarshan(oracle):
    """Every HEATMAP record (API, rank, bin width, bins) of every real log."""
    compared = 0
    for path in ALL_LOGS:
        ref, log = oracle[path], _read(path)
        if log is None or "heatmaps" not in ref:
            assert log is None or log.heatmaps is None, path
            continue
        h = log.heatmaps
        at = h.offsets
        ours = sorted(
            (
                api.removeprefix("heatmap:"),
                rank,
                width,
                h.write_bins[a : a + n].tolist(),
                h.read_bins[a : a + n].tolist(),
            )
            for api, rank, width, a, n in zip(
                h.apis.tolist(), h.ranks.tolist(), h.bin_seconds.tolist(), at.tolist(), h.nbins.tolist()
            )
        )
        want = sorted(
            (api, rank, width, w.tolist(), r.tolist()) for api, rank, width, w, r in ref["heatmaps"]
        )
        assert ours == want, path
        compared += 1
    assert compared == 42
