"""`mosaic store` when something is wrong around the store: a destination that cannot be
written (no such folder, a full disk), a backup that is no database, a date that is not
one. Each stops with exit 1 or 2 and a sentence, leaves no half copy behind, and never
shows a traceback (until 2026-11-29 SQLite's errors escaped as tracebacks, and
``--before 2020-01-01garbage`` pruned as if it were a date)."""

import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from mosaic.corpus.store_commands import store

STORES = Path(__file__).resolve().parents[1] / "data" / "stores"
MOSAIC = Path(sys.executable).with_name("mosaic")


@pytest.fixture
def small_store(tmp_path):
    """A store of the current layout (8 runs, 4 groups, ~100 kB)."""
    path = tmp_path / "store.sqlite"
    shutil.copy(STORES / "layout-2-1181d4f.sqlite", path)
    assert CliRunner().invoke(store, ["info", str(path)]).exit_code == 0  # upgraded once
    return path


def test_a_backup_into_a_missing_folder_says_so(small_store, tmp_path):
    result = CliRunner().invoke(store, ["backup", str(small_store), str(tmp_path / "none" / "copy.sqlite")])
    assert result.exit_code == 1
    assert f"cannot back {small_store} up to {tmp_path / 'none' / 'copy.sqlite'}" in result.output
    assert "unable to open database file" in result.output and "Traceback" not in result.output


def test_a_backup_onto_a_full_disk_leaves_no_half_copy(small_store, tmp_path):
    """No file may grow past 64 kB (RLIMIT_FSIZE: what a full disk does to a write): the store
    opens (its 32 kB -shm fits), its ~100 kB copy does not."""

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 10, 64 << 10))

    done = subprocess.run(
        [str(MOSAIC), "store", "backup", str(small_store), str(tmp_path / "copy.sqlite")],
        capture_output=True,
        text=True,
        preexec_fn=small_files,
        timeout=60,
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"cannot back {small_store} up to" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["store.sqlite"]  # no copy.sqlite.tmp


def test_restoring_a_file_that_is_no_database_is_refused_and_creates_nothing(tmp_path):
    (tmp_path / "backup.sqlite").write_bytes(b"not a database, but long enough to look like a file" * 100)
    result = CliRunner().invoke(
        store, ["restore", str(tmp_path / "backup.sqlite"), str(tmp_path / "s.sqlite")]
    )
    assert result.exit_code == 1 and "is damaged (file is not a database)" in result.output
    assert not (tmp_path / "s.sqlite").exists()


@pytest.mark.parametrize(
    "before, code",
    [("2020-01-01garbage", 2), ("2020-02-30", 2), ("2026-11-25T07:00:00Z", 0), ("2026-11-26", 0)],
)
def test_prune_takes_a_whole_date_or_time_only(small_store, before, code):
    result = CliRunner().invoke(store, ["prune", str(small_store), "--before", before])
    assert result.exit_code == code, result.output
    if code:
        assert "give a date as YYYY-MM-DD" in result.output
