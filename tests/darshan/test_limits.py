"""Size limits: files, archive members, inflated data and DXT regions past a limit
are evicted too_large, decided before reading or inflating past the limit."""

import io
import os
import subprocess
import sys
import tarfile
import zlib
from pathlib import Path

import pytest

from mosaic.darshan import formats as F
from mosaic.darshan.archive import iter_archive, read_bytes
from mosaic.darshan.reader import DXT_MEMORY_PER_BYTE, read_log
from mosaic.errors import LogError
from mosaic_testing.handmade import posix_v4, v3_log
from mosaic_testing.written import dxt_log, dxt_region

GOOD = v3_log("3.41", names={1: "/a"}, modules={"POSIX": (4, [posix_v4(1, bytes_read=5)])})
PLAIN = v3_log(
    "3.41",
    comp=2,
    names={1: "/a"},  # uncompressed: inflated size = region sizes
    modules={"POSIX": (4, [posix_v4(1, bytes_read=5)])},
)
MB = 1 << 20


def too_large(call):
    with pytest.raises(LogError) as err:
        call()
    assert err.value.reason == "too_large", err.value.detail
    return err.value.detail


def test_log_size_edge(tmp_path):
    path = tmp_path / "x.darshan"
    path.write_bytes(GOOD)
    assert read_log(path, max_log_bytes=len(GOOD)).job.nprocs == 4
    assert read_log(GOOD, max_log_bytes=len(GOOD)).job.nprocs == 4
    too_large(lambda: read_log(path, max_log_bytes=len(GOOD) - 1))
    too_large(lambda: read_log(GOOD, max_log_bytes=len(GOOD) - 1))


def test_inflated_size_edge():
    inflated = len(PLAIN) - F.header_struct("3.41").size  # job + names + POSIX regions, stored as is
    assert read_log(PLAIN, max_inflated_bytes=inflated).job.nprocs == 4
    too_large(lambda: read_log(PLAIN, max_inflated_bytes=inflated - 1))
    wrapped = zlib.compress(PLAIN, wbits=31)  # a .darshan.gz counts its outer layer too
    assert read_log(wrapped, max_inflated_bytes=len(PLAIN) + inflated).job.nprocs == 4
    too_large(lambda: read_log(wrapped, max_inflated_bytes=len(PLAIN) + inflated - 1))


def test_fifo_and_device_are_never_read(tmp_path):
    fifo = tmp_path / "pipe.darshan"
    os.mkfifo(fifo)  # nobody writes: reading it would block forever
    device = tmp_path / "zero.darshan"
    device.symlink_to("/dev/zero")  # reading it would never end
    for path in (fifo, device):
        with pytest.raises(LogError) as err:
            read_log(path)
        assert err.value.reason == "unreadable" and "not a regular file" in err.value.detail


def gzip_bomb_tar(path: Path, member_bytes: int) -> Path:
    """A .tar.gz with a bomb member of `member_bytes` zeros between two good logs."""
    with tarfile.open(path, "w:gz", compresslevel=1) as tar:
        for name, size, data in [
            ("a.darshan", len(GOOD), io.BytesIO(GOOD)),
            ("bomb.darshan", member_bytes, io.BytesIO(bytes(member_bytes))),
            ("b.darshan", len(GOOD), io.BytesIO(GOOD)),
        ]:
            info = tarfile.TarInfo(name)
            info.size = size
            tar.addfile(info, data)
    return path


def test_archive_member_past_the_limit_is_evicted_and_the_rest_read(tmp_path):
    path = gzip_bomb_tar(tmp_path / "day.tar.gz", 4 * MB)
    entries = list(iter_archive(path, 4 * MB - 1))
    assert [(name, data is not None, error and error[0]) for name, data, error in entries] == [
        ("a.darshan", True, None),
        ("bomb.darshan", False, "too_large"),
        ("b.darshan", True, None),
    ]
    assert entries[2][1] == GOOD
    at_limit = [(name, error and error[0]) for name, _, error in iter_archive(path, 4 * MB)]
    # Within the limit, its first bytes (zeros) say it is no log: read no further.
    assert at_limit == [("a.darshan", None), ("bomb.darshan", "unreadable"), ("b.darshan", None)]
    too_large(lambda: read_bytes(f"{path}/bomb.darshan", 4 * MB - 1))
    too_large(lambda: read_log(f"{path}/bomb.darshan", max_log_bytes=4 * MB - 1))


@pytest.mark.parametrize("version, segment_size", [(1, 32), (2, 40)])
def test_dxt_region_edge_follows_the_memory_budget(version, segment_size):
    data = dxt_log(1000, version)
    region = dxt_region(F.DXT_POSIX, version, 1000)
    assert region == 4 * 104 + 1000 * segment_size
    assert len(read_log(data, memory_bytes=region * DXT_MEMORY_PER_BYTE).dxt_posix.ids) == 1000
    detail = too_large(lambda: read_log(data, memory_bytes=region * DXT_MEMORY_PER_BYTE - 1))
    assert "DXT_POSIX" in detail and "memory budget" in detail
    assert f"more than {(region - 1) // segment_size} segments" in detail


def test_both_dxt_regions_share_the_memory_budget():
    """DXT_MPIIO segments are held beside DXT_POSIX's: the two regions together stay
    within the budget; DXT_MPIIO, read second, gets what DXT_POSIX left."""
    data = dxt_log(1000, 2, mpiio_segments=100)
    both = dxt_region(F.DXT_POSIX, 2, 1000) + dxt_region(F.DXT_MPIIO, 3, 100)
    log = read_log(data, memory_bytes=both * DXT_MEMORY_PER_BYTE)
    assert (len(log.dxt_posix.ids), len(log.dxt_mpiio.ids)) == (1000, 100)
    detail = too_large(lambda: read_log(data, memory_bytes=both * DXT_MEMORY_PER_BYTE - 1))
    assert detail.startswith("DXT_MPIIO region over") and "memory budget" in detail


# Peak RSS from VmHWM: getrusage's ru_maxrss survives exec, so a child would start at
# the peak of the test process that wrote its inputs and hide its own growth.
PEAK_SCRIPT = """
import sys
from mosaic.darshan.archive import iter_archive
from mosaic.darshan.reader import read_log
from mosaic.errors import LogError
def high_water():
    return int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0])
kw = eval(sys.argv[3])
before = high_water()
try:
    if sys.argv[1] == "read_log":
        read_log(sys.argv[2], **kw)
        reason = "ok"
    else:  # every member's outcome
        reason = ",".join(error[0] if error else "ok" for _, _, error in iter_archive(sys.argv[2], **kw))
except LogError as error:
    reason = str(error.reason)
print(reason, (high_water() - before) // 1024)
"""


def peak(path, call="read_log", **limits) -> tuple[str, int]:
    """(outcome, peak RSS growth in MB) of ``call`` (read_log or iter_archive) in a fresh process."""
    out = subprocess.run(
        [sys.executable, "-c", PEAK_SCRIPT, call, str(path), repr(limits)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout.split()
    return out[0], int(out[1])


def test_bombs_are_evicted_with_bounded_memory(tmp_path):
    """Each input would take at least 64 MB if read or inflated whole."""
    sparse = tmp_path / "sparse.darshan"
    with open(sparse, "wb") as fh:
        fh.truncate(2 << 30)  # 2 GB of holes (truncate -s 2G)
    bomb = gzip_bomb_tar(tmp_path / "day.tgz", 64 * MB)
    wrapped = tmp_path / "w.darshan.gz"
    wrapped.write_bytes(zlib.compress(PLAIN + bytes(64 * MB), 1, wbits=31))
    dxt = tmp_path / "dxt.darshan"
    dxt.write_bytes(dxt_log(4 * MB // 2))  # 2 M segments, an 80 MB region (DXT_POSIX v2)
    stored = dxt.stat().st_size // MB  # 30 MB, read whole like any log within max_log_bytes
    cases = [
        (sparse, {}, 32),
        (f"{bomb}/bomb.darshan", {"max_log_bytes": 8 * MB}, 32),
        (wrapped, {"max_inflated_bytes": 8 * MB}, 32),
        # The file, and zlib's copy of the input left when the 8 MB cap stops it (measured
        # 67 MB; inflated whole, the region alone is 80 MB more).
        (dxt, {"memory_bytes": 64 * MB}, 2 * stored + 16),
    ]
    for path, limits, bound in cases:
        reason, grown = peak(path, **limits)
        assert reason == "too_large" and grown < bound, (path, reason, grown)


def test_a_file_or_member_that_is_no_log_is_read_no_further_than_its_first_bytes(tmp_path):
    """64 MB of zeros within the size limit: the first bytes say "no log"
    (a 1 GiB member was read whole first, 2.2 GB at the peak)."""
    bomb = gzip_bomb_tar(tmp_path / "day.tar.gz", 64 * MB)
    zeros = tmp_path / "zeros.darshan"
    zeros.write_bytes(bytes(64 * MB))
    assert peak(bomb, "iter_archive", max_member_bytes=64 * MB)[0] == "ok,unreadable,ok"
    for path, call, limits in [
        (bomb, "iter_archive", {"max_member_bytes": 64 * MB}),
        (f"{bomb}/bomb.darshan", "read_log", {"max_log_bytes": 64 * MB}),
        (zeros, "read_log", {"max_log_bytes": 64 * MB}),
    ]:
        reason, grown = peak(path, call, **limits)
        assert reason.startswith(("unreadable", "ok,unreadable")) and grown < 16, (path, reason, grown)


def test_reading_a_member_costs_about_its_size(tmp_path):
    """A member that starts like a log is read into one buffer of its size (tarfile's
    own read of a .tar.gz member held 2-3 times the member)."""
    path = tmp_path / "day.tar.gz"
    with tarfile.open(path, "w:gz", compresslevel=1) as tar:
        info = tarfile.TarInfo("big.darshan")
        info.size = 64 * MB
        tar.addfile(info, io.BytesIO(b"3." + bytes(64 * MB - 2)))
    reason, grown = peak(path, "iter_archive")
    assert reason == "ok" and 48 <= grown < 80, grown  # measured 61 (read whole: not 0)
