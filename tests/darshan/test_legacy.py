"""Darshan 2.x logs, built by hand (pydarshan cannot read them)."""

import numpy as np
import pytest

from mosaic.config import Config
from mosaic.darshan import formats as F
from mosaic.darshan.legacy import legacy_log as legacy_log_of
from mosaic.darshan.legacy import legacy_records
from mosaic.darshan.reader import read_log
from mosaic.darshan.writer import write_legacy_log
from mosaic.errors import LogError
from mosaic.trace import build_trace
from mosaic_testing.handmade import legacy_log

OPENS, SEEKS, READS, WRITES, BYTES_READ, BYTES_WRITTEN, DEVICE = 13, 14, 11, 12, 47, 48, 138
OPEN, READ_START, WRITE_START, CLOSE, READ_END, WRITE_END = 0, 1, 2, 3, 4, 5
RECORDS = (
    # shared output file on /scratch, with read/write intervals
    (
        0xAAAA,
        -1,
        "run/out.dat",
        {OPENS: 8, SEEKS: 3, BYTES_WRITTEN: 800, WRITES: 8, DEVICE: 5},
        {OPEN: 1.0, WRITE_START: 2.0, WRITE_END: 6.0, CLOSE: 7.0},
    ),
    # a rank's input on /, written by a runtime that kept only open/close
    (0xBBBB, 1, "/etc/input.cfg", {OPENS: 1, BYTES_READ: 50, READS: 1, DEVICE: 1}, {OPEN: 0.5, CLOSE: 0.75}),
)


@pytest.mark.parametrize("wrap", [None, "gz", "bz2"])
@pytest.mark.parametrize("version", ["2.05", "2.06"])
@pytest.mark.parametrize("e", ["<", ">"])
def test_read_legacy(wrap, version, e):
    log = read_log(legacy_log(version, e=e, records=RECORDS, wrap=wrap))
    job = log.job
    assert (job.uid, job.job_id, job.nprocs, job.version) == (7, 99, 2, version)
    assert job.run_time == 10.0  # whole seconds: end - start + 1
    assert job.cmdline == "/bin/old -i in"
    assert job.mounts == [("/scratch", "lustre"), ("/", "ext3")]
    assert job.metadata == {"lib_ver": "2.2.9"}
    posix = log.modules[F.POSIX]
    assert posix.version == 4 and posix.ids.tolist() == [0xAAAA, 0xBBBB]
    assert posix.ranks.tolist() == [-1, 1]
    c = posix.canonical()
    assert c["opens"].tolist() == [8, 1] and c["seeks"].tolist() == [3, 0]
    assert c["bytes_written"].tolist() == [800, 0] and c["bytes_read"].tolist() == [0, 50]
    assert c["write_start"].tolist() == [2.0, 0.5] and c["write_end"].tolist() == [6.0, 0.75]
    # no read interval recorded: the open..close interval stands in
    assert c["read_start"].tolist() == [1.0, 0.5] and c["read_end"].tolist() == [7.0, 0.75]
    assert c["open_start"].tolist() == c["open_end"].tolist() == [1.0, 0.5]
    assert c["close_start"].tolist() == c["close_end"].tolist() == [7.0, 0.75]
    assert log.names == {0xAAAA: "run/out.dat", 0xBBBB: "/etc/input.cfg"}
    assert log.record_mounts == {0xAAAA: "/scratch", 0xBBBB: "/"}


def test_the_records_keep_copies_so_the_logs_bytes_can_go_first():
    # The reader drops a 2.x log's bytes before it builds the POSIX v4 tables: a 600 MB
    # log of 473,000 records peaked at 1,064 MB (past a batch worker's 1 GiB bound,
    # too_large) while both were held, 739 MB since. Nothing may still point into them.
    raw = bytearray(legacy_log("2.06", records=RECORDS))
    records = legacy_records(raw)
    raw[:] = bytes(len(raw))
    log = legacy_log_of(records)
    assert log.names == {0xAAAA: "run/out.dat", 0xBBBB: "/etc/input.cfg"}
    assert log.modules[F.POSIX].canonical()["bytes_written"].tolist() == [800, 0]
    assert log.record_mounts == {0xAAAA: "/scratch", 0xBBBB: "/"}


def test_absolute_timestamps_become_relative():
    start = 1_300_000_000
    rec = (
        (
            1,
            0,
            "f",
            {BYTES_READ: 5, DEVICE: 5},
            {OPEN: start + 1.0, READ_START: start + 2.0, READ_END: start + 3.0, CLOSE: start + 4.0},
        ),
    )
    c = read_log(legacy_log(records=rec, start=start)).modules[F.POSIX].canonical()
    assert (c["open_start"][0], c["read_start"][0], c["read_end"][0], c["close_end"][0]) == (
        1.0,
        2.0,
        3.0,
        4.0,
    )


def test_mount_filter_sees_the_device_mount():
    log = read_log(legacy_log(records=RECORDS))
    only_scratch = build_trace(log, "x", Config(mounts=("/scratch",)))
    assert only_scratch.ops["bytes"].tolist() == [800.0]
    assert only_scratch.ops["ranks"].tolist() == [2]  # shared record: nprocs
    everything = build_trace(log, "x", Config())
    assert sorted(everything.ops["bytes"].tolist()) == [50.0, 800.0]
    assert build_trace(log, "x", Config(excluded_prefixes=("/etc",))).ops["bytes"].tolist() == [800.0]


@pytest.mark.parametrize(
    "mutate, reason",
    [
        (lambda b: b[:4000], "truncated"),
        (lambda b: b[:-10], "truncated"),
        (lambda b: b"2.04" + b[4:], "unsupported_version"),
        (lambda b: b[:8] + b"\0" * 8 + b[16:], "unreadable"),
    ],
)
def test_bad_legacy_logs(mutate, reason):
    with pytest.raises(LogError) as err:
        read_log(mutate(legacy_log(records=RECORDS)))
    assert err.value.reason == reason


def test_legacy_bad_job_and_no_records():
    with pytest.raises(LogError) as err:
        read_log(legacy_log(records=RECORDS, nprocs=0))
    assert err.value.reason == "bad_job"
    with pytest.raises(LogError) as err:
        read_log(legacy_log(records=RECORDS, start=10, end=5))
    assert err.value.reason == "bad_job"
    with pytest.raises(LogError) as err:
        read_log(legacy_log(records=()))
    assert err.value.reason == "no_io_modules"


def test_reads_the_writer_helpers_legacy_logs():
    log = read_log(legacy_log(records=RECORDS))
    for compression in ("none", "gzip", "bzip2"):
        again = read_log(write_legacy_log(log, "2.06", compression))
        c, want = again.modules[F.POSIX].canonical(), log.modules[F.POSIX].canonical()
        for name in ("opens", "bytes_read", "bytes_written", "open_start", "close_end"):
            assert np.array_equal(c[name], want[name]), name


FREADS, FWRITES, FOPENS, FSEEKS = 17, 18, 19, 20  # CP_POSIX_F* of darshan-log-format.h 2.x


def test_stream_calls_count_as_the_records_calls():
    """2.x counts fopen / fread / fwrite / fseek apart (CP_POSIX_F*); in 3.x the STDIO record
    counts them as its opens, reads, writes and seeks: a stream opened 4 times is 4 opens."""
    records = (
        (0xCCCC, -1, "in.txt", {FOPENS: 4, FREADS: 12, FSEEKS: 2, BYTES_READ: 400}, {OPEN: 1.0, CLOSE: 2.0}),
        (0xDDDD, 0, "both.dat", {OPENS: 1, FOPENS: 1, WRITES: 2, FWRITES: 3, BYTES_WRITTEN: 9}, {OPEN: 3.0}),
    )
    c = read_log(legacy_log(records=records)).modules[F.POSIX].canonical()
    assert c["opens"].tolist() == [4, 2]
    assert c["reads"].tolist() == [12, 0] and c["writes"].tolist() == [0, 5]
    assert c["seeks"].tolist() == [2, 0]


def test_runtime_2x_logs_count_the_requests_of_their_3x_twins():
    """Each 2.3.1 runtime log's program fopens its 4-rank input once per rank: 96 requests
    without those 4 opens and their 4 closes, 104 like the same program under darshan 3.x."""
    from mosaic.logfile import categorize_file
    from mosaic_testing.parser_text import RUNTIME_LOGS

    old = sorted((RUNTIME_LOGS / "darshan-2.3.1").glob("*.darshan.gz"))
    if not old:
        pytest.skip("tests/data/darshan-logs-runtime not present")
    for path in old:
        twin = RUNTIME_LOGS / "darshan-main" / path.name.removesuffix(".gz")
        requests = [categorize_file(p, Config())["metadata"]["requests"] for p in (path, twin)]
        assert requests[0] == requests[1], path.name
    ckpt = categorize_file(RUNTIME_LOGS / "darshan-2.3.1" / "pub_ckpt_newfile_7s.darshan.gz", Config())
    assert ckpt["metadata"]["requests"] == 104
