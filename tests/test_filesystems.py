"""Records keyed by mount point (SPEC 3.10): longest match at a / boundary, never by type."""

from pathlib import Path

import numpy as np
import pytest

from mosaic.activity import build_activity
from mosaic.config import Config
from mosaic.darshan.reader import read_log
from mosaic.filesystems import UNKNOWN, is_shared, mount_table, mounts_of_paths, record_mounts

INTERFERENCE = Path(__file__).parent / "data" / "darshan-logs-interference"
MOUNTS = [("/scratch2", "lustre"), ("/scratch", "lustre"), ("/home", "nfs"), ("/", "ext4")]


def test_longest_mount_at_a_slash_boundary():
    paths = ["/scratch/a", "/scratch2/b", "/scratchy/c", "/scratch", "/home/u/x", "/tmp/y", "<STDOUT>", ""]
    got = mounts_of_paths(paths, MOUNTS).tolist()
    assert got == ["/scratch", "/scratch2", "/", "/scratch", "/home", "/", UNKNOWN, UNKNOWN]


def test_no_mount_table_leaves_every_record_unknown():
    assert mounts_of_paths(["/scratch/a"], []).tolist() == [UNKNOWN]


def test_a_trailing_slash_in_the_table_is_the_same_mount():
    assert mounts_of_paths(
        ["/scratch/a", "/scratchb"], [("/scratch/", "lustre"), ("/", "ext4")]
    ).tolist() == [
        "/scratch",
        "/",
    ]


def test_shared_by_type_or_by_mount_point():
    default = Config().shared_file_systems
    assert is_shared("/scratch", "lustre", default)
    assert is_shared("/home", "NFS", default)  # types compare case-insensitively
    assert not is_shared("/", "ext4", default)
    assert not is_shared("/dev/shm", "tmpfs", default)
    assert not is_shared(UNKNOWN, "lustre", default)
    named = ("/mnt/mosaic-ifs",)
    assert is_shared("/mnt/mosaic-ifs", "ext4", named)
    assert is_shared("/mnt/mosaic-ifs/", "ext4", named)
    assert not is_shared("/mnt/mosaic-ifs2", "ext4", named)
    assert not is_shared("/scratch", "lustre", named)  # a list of mount points names only those


def test_two_mounts_of_one_type_are_two_file_systems():
    table = mount_table(MOUNTS, ("lustre",))
    assert table["/scratch"].shared and table["/scratch2"].shared
    assert table["/scratch"] != table["/scratch2"]
    assert not table["/"].shared


def test_record_ids_resolve_once_each_and_legacy_devices_win():
    names = {1: "/scratch/a", 2: "/tmp/b"}
    ids = np.array([2, 1, 2, 3], np.uint64)
    assert record_mounts(ids, names, MOUNTS).tolist() == ["/", "/scratch", "/", UNKNOWN]
    legacy = {1: "/scratch2", 2: "/", 3: ""}  # 2.x: the device's mount, the name a suffix
    assert record_mounts(ids, names, MOUNTS, legacy).tolist() == ["/", "/scratch2", "/", UNKNOWN]


@pytest.mark.parametrize("app", ["ram_ckpt", "lmp_restart", "hdf_bulk"])
def test_interference_logs_keep_the_tmpfs_apart(app):
    """Darshan left /mnt/mosaic-fast out of every table: the control's files fall under /,
    which is node-local, and never with /mnt/mosaic-ifs."""
    config = Config(shared_file_systems=("/mnt/mosaic-ifs",))
    for path in sorted((INTERFERENCE / "logs").glob(f"*_{app}_*")):
        log = read_log(path)
        assert ("/mnt/mosaic-fast", "tmpfs") not in log.job.mounts
        activity = build_activity(log, config)
        if app == "ram_ckpt":
            assert set(activity.by_fs) == {"/"}
            assert not activity.by_fs["/"].shared
        else:
            assert set(activity.by_fs) == {"/mnt/mosaic-ifs"}
            assert activity.by_fs["/mnt/mosaic-ifs"].shared
