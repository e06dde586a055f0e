"""Logs inside tar archives, read in place."""

import io
import tarfile

import pytest

from mosaic.darshan.archive import is_archive_name, is_log_name, iter_archive, read_bytes
from mosaic.darshan.reader import read_log
from mosaic.errors import LogError
from mosaic_testing.handmade import legacy_log, posix_v4, v3_log

GOOD = v3_log("3.41", names={1: "/a"}, modules={"POSIX": (4, [posix_v4(1, bytes_read=5)])})
OLD = legacy_log(records=((1, 0, "x", {47: 3}, {}),), wrap="gz")
MEMBERS = {
    "day/u_app_id1.darshan": GOOD,
    "day/u_old_id2.darshan.gz": OLD,
    "day/broken_id3.darshan": GOOD[:500],
    "day/README.txt": b"not a log",
}


def make_tar(path, members, mode):
    with tarfile.open(path, mode) as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_names():
    assert is_log_name("a.darshan") and is_log_name("a.darshan.gz") and is_log_name("a.darshan.bz2")
    assert not is_log_name("a.darshan.txt") and not is_log_name("a.tar")
    assert is_archive_name("d.tar") and is_archive_name("d.tar.gz") and is_archive_name("d.tgz")
    assert not is_archive_name("d.tar.bz2.log")


@pytest.mark.parametrize("suffix, mode", [(".tar", "w"), (".tar.gz", "w:gz"), (".tgz", "w:gz")])
def test_iter_archive_yields_logs_only(tmp_path, suffix, mode):
    path = make_tar(tmp_path / f"day{suffix}", MEMBERS, mode)
    entries = list(iter_archive(path))
    assert all(error is None for _, _, error in entries)
    got = {name: data for name, data, _ in entries}
    assert set(got) == {"day/u_app_id1.darshan", "day/u_old_id2.darshan.gz", "day/broken_id3.darshan"}
    assert read_log(got["day/u_app_id1.darshan"]).job.nprocs == 4
    assert read_log(got["day/u_old_id2.darshan.gz"]).job.version == "2.06"
    with pytest.raises(LogError) as err:  # a corrupt member is the member's problem
        read_log(got["day/broken_id3.darshan"])
    assert err.value.reason == "truncated"


def test_virtual_paths(tmp_path):
    path = make_tar(tmp_path / "day.tar.gz", MEMBERS, "w:gz")
    assert read_bytes(f"{path}/day/u_app_id1.darshan") == GOOD
    assert read_log(f"{path}/day/u_old_id2.darshan.gz").job.uid == 7
    with pytest.raises(LogError) as err:
        read_bytes(f"{path}/day/missing.darshan")
    assert err.value.reason == "unreadable"
    with pytest.raises(LogError):
        read_bytes(str(tmp_path / "nothing.tar.gz/x.darshan"))
    plain = tmp_path / "p.darshan"
    plain.write_bytes(GOOD)
    assert read_bytes(str(plain)) == GOOD


def test_corrupt_archive_raises_unreadable(tmp_path):
    whole = make_tar(tmp_path / "ok.tar.gz", MEMBERS, "w:gz").read_bytes()
    cut = tmp_path / "cut.tar.gz"
    # Every cut before the 8-byte gzip trailer (CRC, size: tarfile does not
    # check it, and all data is there) loses data; tarfile alone stops quietly.
    for end in range(1, len(whole) - 8, 7):
        cut.write_bytes(whole[:end])
        with pytest.raises(LogError) as err:
            list(iter_archive(cut))
        assert err.value.reason == "unreadable"
    plain = make_tar(tmp_path / "ok.tar", MEMBERS, "w").read_bytes()
    cut.write_bytes(plain[: 512 + 700])  # inside the first member's data
    with pytest.raises(LogError) as err:
        list(iter_archive(cut))
    assert err.value.reason == "unreadable"
    junk = tmp_path / "junk.tgz"
    junk.write_bytes(b"\x1f\x8b" + b"\0" * 100)
    with pytest.raises(LogError) as err:
        list(iter_archive(junk))
    assert err.value.reason == "unreadable"
    with pytest.raises(LogError):
        read_bytes(f"{junk}/a.darshan")
