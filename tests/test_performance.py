"""SPEC 3.9: each job's I/O performance, darshan-util's figures and mosaic's own.

Oracles: pydarshan's accumulator (darshan-util's C code) on every real log of tests/data
it reads, darshan-parser --perf's table of the interference logs, and hand-computed values
for the logs darshan-util cannot read (2.x, POSIX v1 with stream counters).
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mosaic.config import DEFAULT
from mosaic.darshan import formats as F
from mosaic.darshan.derived import MIB, log_metrics
from mosaic.darshan.reader import read_log
from mosaic.darshan.writer import record_id
from mosaic.errors import LogError
from mosaic.performance import direction, figure, io_mode, io_time, sizes
from mosaic.trace import build_trace, log_facts, read_trace

DATA = Path(__file__).resolve().parent / "data"
INTERFERENCE = DATA / "darshan-logs-interference"
REAL_LOGS = sorted(p for p in DATA.rglob("*.darshan") if p.name != "empty_log.darshan")
HDF_BULK = INTERFERENCE / "logs" / "root_hdf_bulk_id70001-0_12-1-6-7_1.darshan"
IMBALANCED = DATA / "darshan-logs" / "imbalanced_io" / "imbalanced-io.darshan"
LEGACY_APPEND = DATA / "darshan-logs-runtime" / "darshan-2.3.1" / "pub_heatmap_append_7s.darshan.gz"

# pydarshan's accumulator over every real log, in ONE child process (a pydarshan crash
# cannot take the test process down; ~3 s for the 134 logs).
PROBE = """
import json, sys, warnings
warnings.filterwarnings("ignore")
import darshan
from darshan.backend.cffi_backend import accumulate_records
out = {}
for path in sys.argv[1:]:
    res = {}
    with darshan.DarshanReport(path, read_all=False) as rep:
        for mod in ("POSIX", "MPI-IO", "STDIO"):
            if mod in rep.modules:
                rep.mod_read_all_records(mod)
                nprocs = rep.metadata["job"]["nprocs"]
                d = accumulate_records(rep.records[mod].to_df(), mod, nprocs).derived_metrics
                res[mod] = [d.total_bytes, d.agg_time_by_slowest, d.agg_perf_by_slowest]
    out[path] = res
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def pydarshan_metrics() -> dict[str, dict[str, list[float]]]:
    pytest.importorskip("darshan")
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *map(str, REAL_LOGS)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found: dict[str, dict[str, list[float]]] = json.loads(done.stdout.splitlines()[-1])
    return found


def test_darshan_util_module_totals_equal_pydarshans_accumulator_on_every_real_log(pydarshan_metrics):
    compared = 0
    for path in REAL_LOGS:
        log = read_log(path)
        ours = log_metrics(log)
        try:  # the figure every result carries is computed from the cleaned rows: the same
            facts = log_facts(log, DEFAULT)
        except LogError:
            facts = None
        if facts is not None and facts.performance is not None:
            carried = facts.performance["darshan_util"]
            assert set(carried) == set(ours), path
            for module, mine in ours.items():  # summed in another order: equal to the last bits
                for key, value in mine.items():
                    if isinstance(value, float):
                        assert carried[module][key] == pytest.approx(value, rel=1e-12, abs=0), (path, key)
                    else:
                        assert carried[module][key] == value, (path, module, key)
        theirs = pydarshan_metrics[str(path)]
        assert set(theirs) <= set(ours), path
        for module, (total_bytes, agg_time, agg_perf) in theirs.items():
            mine = ours[module]
            assert mine["total_bytes"] == total_bytes, (path, module)
            assert mine["agg_time_by_slowest"] == pytest.approx(agg_time, rel=1e-9, abs=0), (path, module)
            # darshan-util prints 0 where it has no time; mosaic says "not known" (None)
            assert (mine["agg_perf_by_slowest"] or 0.0) == pytest.approx(agg_perf, rel=1e-9, abs=0)
            compared += 1
    assert len(REAL_LOGS) == 134 and compared == 301


def test_darshan_util_figures_equal_darshan_parser_perf_of_the_interference_logs():
    rows = list(csv.DictReader(open(INTERFERENCE / "darshan-parser-perf.tsv"), delimiter="\t"))
    assert len(rows) == 68
    for row in rows:
        mine = log_metrics(read_log(INTERFERENCE / "logs" / row["file"]))[row["module"]]
        assert mine["total_bytes"] == float(row["total_bytes"])
        for key, column in (
            ("agg_time_by_slowest", "agg_time_by_slowest_s"),
            ("unique_slowest_rank_io_time", "unique_slowest_rank_io_time_s"),
            ("shared_time_by_slowest", "shared_time_by_slowest_s"),
        ):
            expected = float(row[column])
            assert abs(mine[key] - expected) <= max(1e-3 * expected, 1e-6), (row["file"], key)
        expected = float(row["agg_perf_by_slowest_MiBps"])
        assert abs((mine["agg_perf_by_slowest"] or 0.0) - expected) <= 1e-3 * expected


# --------------------------------------------------------------- mosaic's figure: the rules


def test_a_direction_with_bytes_and_no_time_is_not_known_never_0():
    assert direction(100.0, 0.0, 10.0) == {
        "bytes": 100.0,
        "time": None,
        "bandwidth": None,
        "time_share": None,
    }
    # no bytes, no time: a real 0 s, and no bandwidth to speak of
    assert direction(0.0, 0.0, 10.0) == {"bytes": 0.0, "time": 0.0, "bandwidth": None, "time_share": 0.0}
    assert direction(200.0, 4.0, 10.0) == {"bytes": 200.0, "time": 4.0, "bandwidth": 50.0, "time_share": 0.4}
    assert io_time(None) is None
    assert io_time({"job": {"total": {"time": None}}}) is None
    assert io_time({"job": {"total": {"time": 2.5}}}) == 2.5


def test_per_direction_time_is_the_slowest_ranks_plus_the_shared_time_split_by_its_shares():
    # rank 0: read 1 s + write 2 s (two records), meta 0.5; rank 1: read 3 s, meta 0.25;
    # one shared record: slowest 4 s; its summed times read 1, write 3, meta 0 -> 1 s read, 3 s write
    ranks = np.array([0, 0, 1, -1])
    got = figure(
        ranks,
        bytes_read=np.array([10, 0, 30, 40]),
        bytes_written=np.array([0, 20, 0, 60]),
        read_time=np.array([1.0, 0.0, 3.0, 1.0]),
        write_time=np.array([0.0, 2.0, 0.0, 3.0]),
        meta_time=np.array([0.5, 0.0, 0.25, 0.0]),
        slowest=np.array([0.0, 0.0, 0.0, 4.0]),
        run_time=20.0,
    )
    assert got["read"]["time"] == pytest.approx(3.0 + 1.0)  # rank 1's 3 s, then 4 * 1/4
    assert got["write"]["time"] == pytest.approx(2.0 + 3.0)  # rank 0's 2 s, then 4 * 3/4
    assert got["total"]["time"] == pytest.approx(max(3.5, 3.25) + 4.0)  # darshan-util's rule
    assert got["read"]["bytes"] == 80 and got["write"]["bytes"] == 80
    assert got["write"]["bandwidth"] == pytest.approx(80 / 5.0)
    assert got["total"]["time_share"] == pytest.approx(7.5 / 20.0)


def test_a_shared_record_without_times_of_its_own_splits_by_bytes():
    got = figure(
        np.array([-1]),
        np.array([25]),
        np.array([75]),
        np.zeros(1),
        np.zeros(1),
        np.zeros(1),
        np.array([2.0]),
        10.0,
    )
    assert (got["read"]["time"], got["write"]["time"], got["total"]["time"]) == pytest.approx((0.5, 1.5, 2.0))


def test_io_mode_by_bytes_with_its_edges():
    no_mpiio = np.zeros(0, np.uint64)
    ids = np.array([1, 2, 3, 3, 4], np.uint64)
    ranks = np.array([0, 1, 2, 3, 0])
    # files 1, 2: one rank each (unique); 3: ranks 2 and 3 of 4 (a subset); 4: rank 0 alone
    nbytes = np.array([10, 10, 15, 15, 1])
    mode, kinds = io_mode(ids, ranks, nbytes, 4, 4, no_mpiio)
    assert kinds == {"unique": 21.0, "all": 0.0, "subset": 30.0} and mode == "N:M"
    # unique 31 against subset 30: N:N; 30 against 30 (a tie) goes to the shared kind
    assert io_mode(ids, ranks, np.array([10, 10, 15, 15, 11]), 4, 4, no_mpiio)[0] == "N:N"
    assert io_mode(ids, ranks, np.array([10, 10, 15, 15, 10]), 4, 4, no_mpiio)[0] == "N:M"
    # unique 20 against subset 10: N:N
    assert io_mode(ids, ranks, np.array([10, 10, 5, 5, 0]), 4, 4, no_mpiio)[0] == "N:N"
    # a rank -1 record, or records of every rank, is a file of all ranks: N:1
    assert io_mode(np.array([7], np.uint64), np.array([-1]), np.array([5]), 4, None, no_mpiio)[0] == "N:1"
    every = np.array([8, 8, 8, 8], np.uint64)
    assert io_mode(every, np.arange(4), np.ones(4), 4, 4, no_mpiio)[0] == "N:1"
    # collective buffering: 2 aggregators of 4 ranks write the file MPI-IO shares: N:1
    assert io_mode(every[:2], np.arange(2), np.ones(2), 4, 2, every[:1])[0] == "N:1"
    assert io_mode(every[:2], np.arange(2), np.ones(2), 4, 2, no_mpiio)[0] == "N:M"
    # a one-rank job, or one rank doing I/O: 1:1; no bytes: no mode
    assert io_mode(ids, ranks, nbytes, 1, 1, no_mpiio)[0] == "1:1"
    assert io_mode(ids[:1], ranks[:1], nbytes[:1], 4, 1, no_mpiio)[0] == "1:1"
    assert io_mode(ids, ranks, np.zeros(5), 4, 0, no_mpiio)[0] is None


def test_request_sizes_shares_and_median_bucket_edges():
    assert sizes(np.zeros(10, np.int64)) is None
    histogram = np.array([1, 1, 0, 0, 2, 0, 0, 0, 0, 0])  # 4 requests
    got = sizes(histogram)
    assert got is not None
    assert got["share_up_to_1KiB"] == 0.5 and got["share_up_to_1MiB"] == 1.0
    assert got["median_bucket"] == "100-1K"  # the first bucket where the count reaches half
    got = sizes(np.array([0, 0, 0, 0, 0, 1, 0, 0, 0, 3]))
    assert got is not None and got["median_bucket"] == "1G+" and got["share_up_to_1MiB"] == 0.0


# ---------------------------------------------------- mosaic's figure beside darshan-util's


def test_std_streams_are_in_darshan_utils_figure_and_not_in_mosaics():
    """Difference 1 (docs/method.md 3.9): darshan-util counts IOR's <STDOUT> STDIO record."""
    perf = read_trace(HDF_BULK, DEFAULT).performance
    assert perf is not None
    assert perf["darshan_util"]["STDIO"]["total_bytes"] == 1928.0
    assert perf["modules"]["STDIO"]["total"]["bytes"] == 0.0
    assert perf["left_out"] == {"records": 1, "bytes": 1928.0, "stand_ins": 0}
    # POSIX: the same records, the same figure
    assert perf["job"]["total"]["time"] == perf["darshan_util"]["POSIX"]["agg_time_by_slowest"]
    assert perf["job"]["total"]["bytes"] == perf["darshan_util"]["POSIX"]["total_bytes"] == 335544320.0
    # an N:1 IOR write of 2 ranks; the HEATMAP tells both moved bytes
    assert (perf["job"]["mode"], perf["job"]["ranks_doing_io"], perf["job"]["ranks_source"]) == (
        "N:1",
        2,
        "heatmap",
    )
    assert perf["job"]["read"]["time"] == 0.0 and perf["job"]["read"]["bandwidth"] is None


def test_mpiio_stand_ins_add_bytes_darshan_util_never_counts_and_the_figure_is_a_lower_bound():
    """Difference 2: a partial POSIX module; mosaic's MPI-IO stand-ins carry rank 0's lost bytes."""
    trace = read_trace(IMBALANCED, DEFAULT)
    perf = trace.performance
    assert perf is not None and perf["job"]["lower_bound"] is True
    stand_in_bytes = sum(trace.info["stand_in_bytes"].values())
    assert stand_in_bytes == 26585368556.0
    assert (
        perf["modules"]["POSIX"]["total"]["bytes"]
        == perf["darshan_util"]["POSIX"]["total_bytes"] + stand_in_bytes
    )
    # shared records moved bytes and the log has no HEATMAP nor DXT: ranks doing I/O not known
    assert perf["job"]["ranks_doing_io"] is None and perf["job"]["mode"] == "N:1"


def test_the_job_figure_adds_a_ranks_stdio_time_to_its_posix_time():
    """Difference 3: darshan-util's figures are per module; the job's is POSIX + STDIO per rank."""
    perf = read_trace(IMBALANCED, DEFAULT).performance
    assert perf is not None
    posix, stdio = perf["modules"]["POSIX"]["total"], perf["modules"]["STDIO"]["total"]
    assert perf["job"]["total"]["bytes"] == posix["bytes"] + stdio["bytes"]
    # rank 0 is the slowest in both, so here the times add exactly
    assert perf["job"]["total"]["time"] == pytest.approx(posix["time"] + stdio["time"], rel=1e-12)
    # STDIO: its std streams left out (3,183 bytes), so below darshan-util's
    assert perf["darshan_util"]["STDIO"]["total_bytes"] - stdio["bytes"] == 3183.0


# ----------------------------------------------------------- logs darshan-util cannot read


def test_a_darshan_2_log_keeps_its_posix_times_hand_computed():
    """2.3.1 (format 2.06): values read off darshan-parser 2.3.1's own text of the log
    (pub_heatmap_append_7s.parser.txt, 6 decimals): 4 ranks each append 96 MiB to their
    own file; CP_F_POSIX_WRITE_TIME 0.578007, 0.411877, 1.194083, 1.090143 and META
    0.000476, 0.000315, 0.000272, 0.000320; the shared input file: META 0.000122,
    CP_F_SLOWEST_RANK_TIME 0.000042."""
    perf = read_trace(LEGACY_APPEND, DEFAULT).performance
    assert perf is not None
    util = perf["darshan_util"]["POSIX"]
    assert util["total_bytes"] == 4 * 100663296
    assert util["unique_slowest_rank_io_time"] == pytest.approx(1.194083 + 0.000272, abs=1e-6)
    assert util["shared_time_by_slowest"] == pytest.approx(0.000042, abs=1e-6)
    assert util["agg_time_by_slowest"] == pytest.approx(1.194397, abs=2e-6)
    assert util["agg_perf_by_slowest"] == pytest.approx(384 / 1.194397, rel=2e-6)
    job = perf["job"]
    assert job["write"]["time"] == pytest.approx(1.194083, abs=1e-6)  # no write time on the shared file
    assert job["total"]["time"] == pytest.approx(1.194397, abs=2e-6)
    assert job["write"]["bandwidth"] == pytest.approx(402653184 / 1.194083, rel=2e-6)
    assert job["total"]["time_share"] == pytest.approx(1.194397 / 87, rel=2e-6)
    assert (job["mode"], job["ranks_doing_io"]) == ("N:N", 4)
    assert job["sizes"]["write"]["requests"] == 96 and job["sizes"]["write"]["median_bucket"] == "1M-4M"
    assert job["sizes"]["read"] is None
    assert job["metadata_requests"] == 4 * 12 + 4  # 12 opens per rank, 4 fopens of the input
    assert job["metadata_per_second"] == pytest.approx(52 / 1.194397, rel=2e-6)


def _posix_v1_log() -> F.DarshanLog:
    """A 3.00 log (POSIX v1) whose records count stream calls (FOPENS 6), which
    darshan-util drops on conversion: rank 0 writes 1,000 bytes of file a (WRITE_TIME 0.5,
    META 0.1, 2 fopens), rank 1 reads 3,000 bytes of file b (READ_TIME 1.5, META 0.25)."""
    n_c, n_f = F.RECORD_SHAPES[(F.POSIX, 1)]
    counters = np.zeros((2, n_c), np.int64)
    fcounters = np.zeros((2, n_f))
    counters[0, [0, 2, 6, 14]] = [1, 4, 2, 1000]  # opens, writes, fopens, bytes written
    counters[1, [0, 1, 13]] = [1, 3, 3000]  # opens, reads, bytes read
    counters[0, 38 + 1] = 4  # SIZE_WRITE_100_1K: 4 writes of 250 B
    counters[1, 28 + 1] = 3  # SIZE_READ_100_1K: 3 reads of 1,000 B (the bucket holds up to 1,024)
    fcounters[0, [0, 2, 4, 5, 7, 8]] = [1.0, 1.1, 1.6, 2.0, 0.5, 0.1]
    fcounters[1, [0, 1, 3, 5, 6, 8]] = [1.0, 1.2, 2.7, 3.0, 1.5, 0.25]
    names = {record_id("/scratch/a"): "/scratch/a", record_id("/scratch/b"): "/scratch/b"}
    posix = F.ModuleRecords(
        F.POSIX, 1, np.array(list(names), np.uint64), np.array([0, 1]), counters, fcounters
    )
    job = F.Job(uid=7, job_id=11, start=1.6e9, end=1.6e9 + 9, run_time=10.0, nprocs=2, cmdline="/bin/app")
    job.mounts, job.version = [("/scratch", "lustre"), ("/", "ext4")], "3.00"
    # the writer writes no 3.00 file (its formats start at 3.10): the records as the reader holds them
    return F.DarshanLog(job, names, {F.POSIX: posix}, present_modules=(F.POSIX,))


def test_a_posix_v1_log_with_stream_counters_hand_computed():
    perf = build_trace(_posix_v1_log(), "v1.darshan", DEFAULT).performance
    assert perf is not None
    util = perf["darshan_util"]["POSIX"]
    assert util["total_bytes"] == 4000.0
    assert util["unique_slowest_rank_io_time"] == pytest.approx(1.75)  # rank 1: 1.5 + 0.25
    assert util["agg_perf_by_slowest"] == pytest.approx(4000 / MIB / 1.75)
    job = perf["job"]
    assert (job["read"]["time"], job["write"]["time"], job["total"]["time"]) == pytest.approx(
        (1.5, 0.5, 1.75)
    )
    assert job["read"]["bandwidth"] == pytest.approx(2000.0) and job["write"]["bandwidth"] == pytest.approx(
        2000.0
    )
    assert (job["mode"], job["ranks_doing_io"]) == ("N:N", 2)
    assert (
        job["sizes"]["write"]["share_up_to_1KiB"] == 1.0 and job["sizes"]["read"]["median_bucket"] == "100-1K"
    )
    assert job["metadata_requests"] == 2  # the canonical opens (fopens are STDIO's calls in 3.x)


def test_damaged_time_counters_read_as_0_and_the_result_stays_json():
    """NaN, an infinity, a negative or absurd duration: no runtime writes one; each reads as 0
    (so bytes without any other time are "not known"), and the result object is JSON."""
    log = _posix_v1_log()
    posix = log.modules[F.POSIX]
    posix.fcounters[0, [6, 7, 8]] = [np.nan, np.inf, -1.0]  # rank 0: READ, WRITE, META
    posix.fcounters[1, [6, 8]] = [1e300, 0.25]  # rank 1: READ absurd, META kept
    perf = build_trace(log, "damaged.darshan", DEFAULT).performance
    assert perf is not None
    json.dumps(perf, allow_nan=False)  # raises on NaN or an infinity
    job = perf["job"]
    assert job["write"]["time"] is None and job["write"]["bandwidth"] is None  # 1,000 B, no time
    assert job["read"]["time"] is None  # 3,000 B, its only READ time was damage
    assert job["total"]["time"] == pytest.approx(0.25)  # rank 1's metadata time alone
    assert perf["darshan_util"]["POSIX"]["agg_time_by_slowest"] == pytest.approx(0.25)
