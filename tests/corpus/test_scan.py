"""SPEC 2: which files are logs, archive members named ARCHIVE/MEMBER, skipped files counted."""

import io
import tarfile

import pytest

from mosaic.corpus.scan import ScanCounts, count_log_files, scan


@pytest.fixture
def tree(tmp_path, shared_logs):
    """in/a.darshan, in/notes.txt, in/sub/b.darshan, in/sub/day.tar.gz (2 logs + README),
    in/sub/zz.tar (damaged)."""
    root = tmp_path / "in"
    (root / "sub").mkdir(parents=True)
    (root / "a.darshan").symlink_to(shared_logs[0])
    (root / "notes.txt").write_text("not a log")
    (root / "sub" / "b.darshan").symlink_to(shared_logs[1])
    with tarfile.open(root / "sub" / "day.tar.gz", "w:gz") as tar:
        tar.add(shared_logs[2], arcname="x/c.darshan")
        tar.add(shared_logs[3], arcname="d.darshan")
        readme = b"hello"
        info = tarfile.TarInfo("README")
        info.size = len(readme)
        tar.addfile(info, io.BytesIO(readme))
    (root / "sub" / "zz.tar").write_bytes(b"\x00garbage" * 100)
    return root


def test_folder_scan_names_counts_and_archive_members(tree, shared_logs):
    counts = ScanCounts()
    refs = list(scan([tree], counts))
    assert [ref.name for ref in refs] == [
        "a.darshan",
        "sub/b.darshan",
        "sub/day.tar.gz/x/c.darshan",
        "sub/day.tar.gz/d.darshan",
        "sub/zz.tar",
    ]
    assert (counts.files_seen, counts.skipped_files, counts.logs, counts.archives) == (5, 1, 5, 2)
    plain, member, damaged = refs[0], refs[2], refs[4]
    assert plain.data is None and plain.archive is None
    assert plain.location == str(tree / "a.darshan")
    assert member.data == shared_logs[2].read_bytes()
    assert member.archive == str(tree / "sub" / "day.tar.gz")
    assert member.location == f"{member.archive}/x/c.darshan"
    assert damaged.error[0] == "unreadable" and damaged.data is None


def test_ship_bytes_reads_plain_files(tree, shared_logs):
    first = next(iter(scan([tree], ship_bytes=True)))
    assert first.data == shared_logs[0].read_bytes()


def test_single_files_keep_their_given_name_and_non_logs_are_skipped(tree):
    counts = ScanCounts()
    refs = list(scan([tree / "a.darshan", tree / "notes.txt"], counts))
    assert [ref.name for ref in refs] == [str(tree / "a.darshan")]
    assert (counts.files_seen, counts.skipped_files, counts.logs) == (2, 1, 1)


def test_several_folders_are_prefixed_with_their_name(tree):
    names = [ref.name for ref in scan([tree / "sub", tree], ScanCounts())]
    assert names[0] == "sub/b.darshan" and "in/a.darshan" in names


def test_progress_total_counts_plain_logs_by_name(tree):
    assert count_log_files([tree]) == 2
    assert count_log_files([tree / "a.darshan", tree / "notes.txt"]) == 1
