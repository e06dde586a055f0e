"""Logs inside tar archives, read in place."""

import io
import sys
import tarfile
from pathlib import Path

import pytest

from mosaic.darshan.archive import is_archive_name, is_log_name, iter_archive, read_bytes
from mosaic.darshan.reader import read_log
from mosaic.errors import LogError
from mosaic.synth.hostile import sparse_member_tar, zero_member_tar
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


def repeated_names_tar(tmp_path: Path) -> Path:
    """A tar holding two members named ``day/a.darshan`` (tar -r appends a copy), the
    second the heavier run of the two, and a member named like a renamed copy (no log
    suffix: not a log, so it takes no log's name)."""
    light = v3_log("3.41", names={1: "/a"}, modules={"POSIX": (4, [posix_v4(1, bytes_read=5)])})
    heavy = v3_log("3.41", names={1: "/a"}, modules={"POSIX": (4, [posix_v4(1, bytes_read=7000)])})
    path = tmp_path / "day.tar"
    with tarfile.open(path, "w") as tar:
        for name, data in [("day/a.darshan", light), ("day/a.darshan", heavy), ("day/a.darshan#2", GOOD)]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_repeated_member_names_are_told_apart(tmp_path):
    """The first copy vanished (5 logs counted, 4 in the outputs)."""
    path = repeated_names_tar(tmp_path)
    names = [name for name, _, _ in iter_archive(path)]
    assert names == ["day/a.darshan", "day/a.darshan#2"]  # the second is the second copy
    second = dict((name, data) for name, data, _ in iter_archive(path))["day/a.darshan#2"]
    assert read_log(second).modules[1].counters[0, 14] == 7000
    assert read_log(f"{path}/day/a.darshan").modules[1].counters[0, 14] == 5  # the first copy
    assert read_log(f"{path}/day/a.darshan#2").modules[1].counters[0, 14] == 7000


@pytest.mark.parametrize("all_runs", [False, True])
def test_every_copy_of_a_repeated_member_is_counted_and_categorized(tmp_path, all_runs):
    import json

    from mosaic.config import Config
    from mosaic.corpus.pipeline import run

    folder, out = tmp_path / "in", tmp_path / "out"
    folder.mkdir()
    run([repeated_names_tar(folder).parent], out, Config(all_runs=all_runs), workers=0)
    funnel = json.loads((out / "summary.json").read_text())["funnel"]
    assert (funnel["logs"], funnel["valid"], funnel["evicted_total"]) == (2, 2, 0)
    traces = [json.loads(line) for line in (out / "traces.jsonl").read_text().splitlines()]
    # The representative is the heavier second copy, read from its own bytes.
    by_file = {trace["file"]: trace["read"]["bytes"] for trace in traces}
    expected = {"day.tar/day/a.darshan#2": 7000}
    assert by_file == ({"day.tar/day/a.darshan": 5} | expected if all_runs else expected)


def skipped_member_tar(path: Path, size: int, mode: str) -> Path:
    """A tar whose first member, `size` zero bytes and no log, stands before a log."""
    return zero_member_tar(path, size, mode, "day/u_app_id1.darshan", GOOD)


def bytes_read_by_this_process() -> int:
    """``rchar`` of /proc/self/io: what read calls returned so far, page cache included."""
    with open("/proc/self/io") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("rchar:"))


def test_a_plain_tar_is_not_read_through_the_members_it_skips(tmp_path):
    # the member's 1 GiB is a hole: nothing on disk
    path = sparse_member_tar(tmp_path / "day.tar", 1 << 30, "day/u_app_id1.darshan", GOOD)
    before = bytes_read_by_this_process()
    assert [(name, data) for name, data, _ in iter_archive(path)] == [("day/u_app_id1.darshan", GOOD)]
    assert bytes_read_by_this_process() - before < 1 << 20  # the headers and the log: it seeked


@pytest.mark.parametrize("mode", ["w:gz", "w:bz2", "w:xz"])
def test_a_compressed_tar_skips_a_member_in_large_steps(tmp_path, mode):
    """16 MiB skipped: 4 steps of 4 MiB (tarfile's stream mode took 1,639 of 10 KiB and
    copied the rest of its buffer on each: a 1 GiB member, 72 s). The calls are counted,
    a measure of the steps that does not depend on the machine's speed."""
    path = skipped_member_tar(tmp_path / "day.tar.x", 16 << 20, mode)
    calls = 0

    def count(frame, event, arg):
        nonlocal calls
        calls += event == "call"

    sys.setprofile(count)
    try:
        got = [(name, data) for name, data, _ in iter_archive(path)]
    finally:
        sys.setprofile(None)
    assert got == [("day/u_app_id1.darshan", GOOD)]
    assert calls < 1000, calls


@pytest.mark.parametrize("mode", ["w:gz", "w:bz2", "w:xz"])
def test_a_compressed_tar_cut_inside_a_skipped_member_is_unreadable(tmp_path, mode):
    whole = skipped_member_tar(tmp_path / "day.tar.x", 1 << 20, mode).read_bytes()
    cut = tmp_path / "cut.tar.x"
    cut.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(LogError) as err:
        list(iter_archive(cut))
    assert err.value.reason == "unreadable"
