"""Mount points remembered per mount table: the same answers as finding them, bounded."""

import numpy as np

from mosaic import filesystems
from mosaic.filesystems import mounts_of_paths, record_mounts

MOUNTS = [("/scratch/", "lustre"), ("/", "ext4"), ("/home", "nfs")]
NAMES = {1: "/scratch/a/out.h5", 2: "/home/u/in.txt", 3: "/tmp/x", 4: "/scratchy/y", 5: "rel/z"}


def test_seen_and_unseen_paths_give_the_found_mounts(monkeypatch):
    monkeypatch.setattr(filesystems, "_known", {})
    ids = np.array([1, 2, 3, 4, 5], np.uint64)
    first = record_mounts(ids, NAMES, MOUNTS, unique=True)  # none seen: found, then kept
    again = record_mounts(ids[::-1], NAMES, MOUNTS, unique=True)  # all seen: from the table
    some = record_mounts(np.array([1, 6], np.uint64), {**NAMES, 6: "/home/v"}, MOUNTS, unique=True)
    expected = mounts_of_paths([NAMES[i] for i in range(1, 6)], MOUNTS).tolist()
    assert first.tolist() == expected == ["/scratch", "/home", "/", "/", ""]
    assert again.tolist() == expected[::-1] and again.dtype == object
    assert some.tolist() == ["/scratch", "/home"]
    other = record_mounts(np.array([4], np.uint64), NAMES, [("/scratchy", "gpfs")], unique=True)
    assert other.tolist() == ["/scratchy"]  # another table: its own answers
    assert len(filesystems._known) == 2


def test_the_table_starts_over_past_its_bound(monkeypatch):
    monkeypatch.setattr(filesystems, "_known", {})
    monkeypatch.setattr(filesystems, "KNOWN_PATHS", 3)
    record_mounts(np.array([1, 2], np.uint64), NAMES, MOUNTS, unique=True)
    record_mounts(np.array([3, 4], np.uint64), NAMES, MOUNTS, unique=True)  # 2 + 2 > 3: cleared first
    (known,) = filesystems._known.values()
    assert sorted(known) == ["/scratchy/y", "/tmp/x"]
