"""Reruns of `mosaic run` after a failure or a change.

A rerun that fails (full disk, kill -9) leaves the previous outputs as they
were and no temporaries; one on a damaged store says how to recover; one
after a log was rewritten in place validates it again. The full disk is a
real one: a small tmpfs.
"""

import errno
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tarfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TextIO

import pytest
from click.testing import CliRunner, Result

from mosaic.cli import main
from mosaic.config import Config
from mosaic.corpus.outputs import OutputSet
from mosaic.corpus.pipeline import OUTPUTS, run
from mosaic.corpus.store import Store
from mosaic.darshan.archive import is_log_name
from mosaic_testing.outputs import comparable, lines

# Settings of the small_config fixture, for the command line.
CONFIG = "batch_size = 16\ncategorize_batch_size = 16\ntrace_timeout_seconds = 20.0\n"
LATER = ("2019/08", "2019/09", "2019/10", "2019/11", "2019/12")  # months added by the rerun


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 16 MiB tmpfs (a real file system that fills up); skipped where mounting is refused."""
    disk = tmp_path / "disk"
    disk.mkdir()
    try:
        mounted = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(disk)], capture_output=True, text=True
        )
    except FileNotFoundError:
        pytest.skip("no mount command")
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {mounted.stderr.strip()}")
    yield disk
    subprocess.run(["umount", "--lazy", str(disk)], check=True)


@pytest.fixture(scope="module")
def mosaic_run(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Path, Path], Result]:
    """`mosaic run CORPUS --out OUT` on the command line (in this process) with the
    settings of small_config."""
    config = tmp_path_factory.mktemp("config") / "small.toml"
    config.write_text(CONFIG)

    def invoke(corpus: Path, out: Path) -> Result:
        options = ["--workers", "0", "--quiet", "--config", str(config)]
        return CliRunner().invoke(main, ["run", str(corpus), "--out", str(out), *options])

    return invoke


def fill(disk: Path, leave: int) -> Path:
    """A file taking all the room of `disk` but `leave` bytes, or less room is left when
    another writer (the store's) takes some meanwhile: the disk is full all the same."""
    ballast = disk / "ballast"
    fd = os.open(ballast, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        os.write(fd, bytes(max(0, shutil.disk_usage(disk).free - leave)))
    except OSError as error:
        if error.errno != errno.ENOSPC:
            raise
    finally:
        os.close(fd)
    return ballast


def write_two(folder: Path, a: str, b: str) -> None:
    """Outputs a.jsonl and b.json of `folder`, replaced by `a` and `b` together."""
    with OutputSet(folder, ("a.jsonl", "b.json")) as outputs:
        outputs.open("a.jsonl").write(a)
        outputs.open("b.json").write(b)
        outputs.commit()


def contents(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir()) if path.is_file()}


def temporaries(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir() if path.name.endswith(".tmp"))


def growing_corpus(year_corpus: Path, folder: Path) -> tuple[Path, Callable[[], None]]:
    """A copy of the year corpus without its last five months, and how to add them back
    (a rerun on more logs writes larger outputs)."""
    corpus, later = folder / "corpus", folder / "later"
    shutil.copytree(year_corpus, corpus)
    for month in LATER:
        shutil.move(corpus / month, later / month)

    def grow() -> None:
        for month in LATER:
            shutil.move(later / month, corpus / month)

    return corpus, grow


@pytest.fixture(scope="module")
def grown_reference(
    year_corpus: Path, small_config: Config, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """A run on part of the corpus then a rerun on all of it, on a roomy disk."""
    folder = tmp_path_factory.mktemp("grown")
    corpus, grow = growing_corpus(year_corpus, folder)
    run([corpus], folder / "out", small_config, workers=0)
    grow()
    run([corpus], folder / "out", small_config, workers=0)
    return folder / "out"


# ----- A full disk -----


def test_outputs_replace_the_previous_ones_only_once_all_are_complete(small_disk: Path) -> None:
    write_two(small_disk, "old a\n", "old b\n")
    assert contents(small_disk) == {"a.jsonl": b"old a\n", "b.json": b"old b\n"}
    ballast = fill(small_disk, 64 << 10)
    with pytest.raises(OSError) as full:
        write_two(small_disk, "a" * (32 << 10), "b" * (256 << 10))  # a fits, b does not
    assert full.value.errno == errno.ENOSPC
    ballast.unlink()
    assert contents(small_disk) == {"a.jsonl": b"old a\n", "b.json": b"old b\n"}  # no temporary
    write_two(small_disk, "new a\n", "new b\n")
    assert contents(small_disk) == {"a.jsonl": b"new a\n", "b.json": b"new b\n"}


def test_a_sync_that_fails_leaves_the_previous_outputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a small file system to fill (no root): fsync refusing the data (ENOSPC, as
    NFS may report a full disk only then) fails the commit before any rename."""
    write_two(tmp_path, "old a\n", "old b\n")

    def no_room(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", no_room)
    with pytest.raises(OSError, match="No space left"):
        write_two(tmp_path, "new a\n", "new b\n")
    assert contents(tmp_path) == {"a.jsonl": b"old a\n", "b.json": b"old b\n"}


def test_a_store_on_a_full_disk_says_so_and_stays_usable(small_disk: Path) -> None:
    """SQLite rolls a transaction back itself on SQLITE_FULL: the store must not ROLLBACK
    again (which failed with "cannot rollback - no transaction is active")."""
    fact = {"file": "x", "location": "/x", "status": "evicted", "reason": "bad_job", "detail": "d" * 4096}
    with Store(small_disk / "store.sqlite") as store:
        store.begin_run("h")
        ballast = fill(small_disk, 0)
        batch = [{**fact, "file": f"{i:04d}"} for i in range(256)]  # 1 MiB of details
        with pytest.raises(sqlite3.OperationalError, match="^database or disk is full$"):
            store.save_facts(batch)
        ballast.unlink()
        assert [row["file"] for row in store.evicted()] == []  # nothing of the failed batch
        store.save_facts(batch[:2])
        assert [row["file"] for row in store.evicted()] == ["0000", "0001"]


@pytest.mark.parametrize(
    ("leave_kib", "when", "error"),
    [
        (0, "before", "disk I/O error"),  # SQLite cannot even make its WAL's shared memory
        (64, "before", "database or disk is full"),
        (16, "at_outputs", "No space left on device"),
    ],
)
def test_a_rerun_on_a_full_disk_keeps_the_previous_outputs_then_resumes(
    year_corpus: Path,
    grown_reference: Path,
    mosaic_run: Callable[[Path, Path], Result],
    small_disk: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    leave_kib: int,
    when: str,
    error: str,
) -> None:
    """First run on part of the corpus, rerun on all of it with the disk filled but
    `leave_kib` KiB, before the rerun (the store runs out of room) or as it starts writing
    its outputs: the command says so, the previous outputs are left byte for byte, no
    temporary stays. Once there is room, the rerun resumes and gives the outputs of a
    rerun that never failed."""
    corpus, grow = growing_corpus(year_corpus, tmp_path)
    out = small_disk / "out"
    assert mosaic_run(corpus, out).exit_code == 0
    before = contents(out)
    grow()
    if when == "before":
        fill(small_disk, leave_kib << 10)
        assert shutil.disk_usage(small_disk).free == leave_kib << 10
    else:
        real_open = OutputSet.open

        def open_on_a_full_disk(outputs: OutputSet, name: str) -> TextIO:
            if name == "traces.jsonl":  # at most 16 KiB of room for ~70 KiB of traces
                fill(small_disk, leave_kib << 10)
            return real_open(outputs, name)

        monkeypatch.setattr(OutputSet, "open", open_on_a_full_disk)
    failed = mosaic_run(corpus, out)
    monkeypatch.undo()
    message = " ".join(failed.output.split())
    assert failed.exit_code == 1 and isinstance(failed.exception, SystemExit), message
    assert message.startswith(f"Error: {out}: ") and error in message and "cannot rollback" not in message
    assert "bytes free on its file system). The previous outputs are unchanged" in message
    after = contents(out)
    assert {name: after[name] for name in OUTPUTS} == {name: before[name] for name in OUTPUTS}
    assert temporaries(out) == []
    (small_disk / "ballast").unlink()
    assert mosaic_run(corpus, out).exit_code == 0
    assert comparable(out) == comparable(grown_reference)
    assert temporaries(out) == []


# A run killed while it writes its outputs: after its temporaries are complete (at the
# first rename), or in the middle of traces.jsonl (after 10 lines).
KILLED_RUN = """
import os, signal, sys, tomllib
from mosaic.config import Config
from mosaic.corpus import outputs, pipeline

def die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)

def ten_then_die(store, all_runs):
    for number, row in enumerate(categorized(store, all_runs)):
        if number == 10:
            die()
        yield row

categorized = pipeline.Store.categorized
if sys.argv[3] == "renaming":
    outputs.os.replace = die
else:
    pipeline.Store.categorized = ten_then_die
config = Config(**tomllib.loads(sys.argv[4]))
pipeline.run([sys.argv[1]], sys.argv[2], config, workers=0)
"""


@pytest.mark.parametrize("point", ["writing_traces", "renaming"])
def test_a_run_killed_while_writing_its_outputs_leaves_them_and_the_next_run_no_temporary(
    year_corpus: Path, grown_reference: Path, small_config: Config, tmp_path: Path, point: str
) -> None:
    corpus, grow = growing_corpus(year_corpus, tmp_path)
    out = tmp_path / "out"
    run([corpus], out, small_config, workers=0)
    before = contents(out)
    grow()
    killed = subprocess.run([sys.executable, "-c", KILLED_RUN, str(corpus), str(out), point, CONFIG])
    assert killed.returncode == -signal.SIGKILL
    after = contents(out)
    assert {name: after[name] for name in OUTPUTS} == {name: before[name] for name in OUTPUTS}
    left = {"writing_traces": ["traces.jsonl.tmp"], "renaming": sorted(f"{name}.tmp" for name in OUTPUTS)}
    assert temporaries(out) == left[point]
    run([corpus], out, small_config, workers=0)
    assert temporaries(out) == []
    assert comparable(out) == comparable(grown_reference)


# ----- A damaged store -----


@pytest.mark.parametrize("damage", ["truncated", "garbage"])
def test_a_rerun_on_a_damaged_store_says_how_to_recover(
    year_corpus: Path,
    reference_run: Path,
    mosaic_run: Callable[[Path, Path], Result],
    tmp_path: Path,
    damage: str,
) -> None:
    out = tmp_path / "out"
    assert mosaic_run(year_corpus, out).exit_code == 0
    before = contents(out)
    store = out / "store.sqlite"
    size = store.stat().st_size
    if damage == "truncated":
        os.truncate(store, size // 2)
    else:
        store.write_bytes(bytes(range(256)) * (size // 256))
    failed = mosaic_run(year_corpus, out)
    message = " ".join(failed.output.split())
    assert failed.exit_code == 1 and isinstance(failed.exception, SystemExit)  # no traceback
    assert message.startswith(f"Error: {store} is damaged (")
    assert f"Move it aside (mv {store} {store}.damaged) and run `mosaic run` again" in message
    assert "runs recorded through the service with ?store=true" in message and "is lost" in message
    after = contents(out)
    assert {name: after[name] for name in OUTPUTS} == {name: before[name] for name in OUTPUTS}
    store.rename(f"{store}.damaged")  # the advice, followed
    assert mosaic_run(year_corpus, out).exit_code == 0
    assert comparable(out) == comparable(reference_run)


# ----- A log rewritten in place -----


def test_a_log_rewritten_with_its_size_and_mtime_put_back_is_validated_again(
    year_corpus: Path, small_config: Config, tmp_path: Path
) -> None:
    """`touch -r` puts size and mtime back; the change time tells. The archive's former
    members are gone: a tar.gz of zeros holds no log."""
    corpus, out = tmp_path / "corpus", tmp_path / "out"
    shutil.copytree(year_corpus, corpus)
    first = run([corpus], out, small_config, workers=0)
    log = lines(out, "traces.jsonl")[0]["file"]
    archive = str(sorted(corpus.rglob("*.tar.gz"))[0].relative_to(corpus))
    members = [row["file"] for row in lines(out, "traces.jsonl") if row["file"].startswith(f"{archive}/")]
    assert members
    for path in (corpus / log, corpus / archive):
        before = path.stat()
        path.write_bytes(bytes(before.st_size))  # zeros: no longer a log, nor an archive of logs
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        assert (path.stat().st_size, path.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    again = run([corpus], out, small_config, workers=0)
    assert {row["file"]: row["reason"] for row in lines(out, "evicted.jsonl")}[log] == "unreadable"
    names = {row["file"] for row in lines(out, "traces.jsonl") + lines(out, "evicted.jsonl")}
    assert log not in {row["file"] for row in lines(out, "traces.jsonl")}
    assert not [name for name in names if name.startswith(f"{archive}/")]
    with tarfile.open(year_corpus / archive) as original:
        held = sum(is_log_name(member) for member in original.getnames())
    assert again["funnel"]["logs"] == first["funnel"]["logs"] - held  # the log still counts
