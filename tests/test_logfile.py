"""The boundary around analysis: a file read, and any failure turned into an eviction (SPEC 3.1, 4)."""

import subprocess
import sys

import mosaic
from mosaic.analysis.categorize import categorize_trace
from mosaic.config import Config
from mosaic.corpus.pipeline import WORKER_PRELOAD
from mosaic.darshan.writer import write_log
from mosaic.errors import LogError
from mosaic.logfile import categorize_file, evicted_result, guarded
from mosaic.service.pool import PRELOAD
from mosaic.trace import read_trace
from mosaic_testing.written import make_log

CFG = Config()


def test_evicted_result():
    assert evicted_result("a/b.darshan", "truncated", "region past end") == {
        "file": "a/b.darshan",
        "status": "evicted",
        "reason": "truncated",
        "detail": "region past end",
    }


def test_guarded_returns_the_work_when_it_succeeds():
    assert guarded("x.darshan", lambda: {"status": "ok"}) == {"status": "ok"}


def test_categorize_file_maps_log_errors_to_their_reason(monkeypatch):
    def raise_log_error(path, config):
        raise LogError("corrupt_stream", "zlib error -3")

    monkeypatch.setattr("mosaic.logfile.read_trace", raise_log_error)
    assert categorize_file("x.darshan", CFG) == evicted_result("x.darshan", "corrupt_stream", "zlib error -3")


def test_memory_error_is_too_large():
    def exhaust():
        raise MemoryError

    assert guarded("big.darshan", exhaust) == evicted_result(
        "big.darshan", "too_large", "needs more memory than a worker may use"
    )


def test_categorize_file_never_lets_an_unexpected_error_escape(monkeypatch):
    def crash(path, config):
        raise IndexError("index 9 is out of bounds")

    monkeypatch.setattr("mosaic.logfile.read_trace", crash)
    assert categorize_file("x.darshan", CFG) == evicted_result(
        "x.darshan", "unreadable", "IndexError: index 9 is out of bounds"
    )


def test_garbage_bytes_are_evicted_not_raised(tmp_path):
    path = tmp_path / "garbage.darshan"
    path.write_bytes(b"\x00not a darshan log" * 10)
    result = categorize_file(path, CFG)
    assert result["status"] == "evicted" and result["reason"] == "unreadable"
    assert result["file"] == str(path)


def test_a_real_log_is_read_and_categorized(shared_logs):
    path = shared_logs[0]
    expected = categorize_trace(read_trace(path, CFG), CFG)
    assert expected["status"] == "ok"
    assert categorize_file(path, CFG) == expected
    assert mosaic.categorize(path) == expected


def test_a_missing_file_is_an_eviction_not_an_exception(tmp_path):
    result = categorize_file(tmp_path / "missing.darshan", CFG)
    assert result["status"] == "evicted" and result["file"] == str(tmp_path / "missing.darshan")


def test_one_log_imports_scipy_spatial_only_when_mean_shift_clusters(tmp_path):
    """scipy.spatial is ~a fifth of a one-log `mosaic categorize` (imports
    dominate it), and most logs of a year have no direction that gets as far as
    clustering; the batch and service workers preload it so they stay warm."""
    quiet = tmp_path / "quiet.darshan"
    quiet.write_bytes(write_log(make_log()))
    probe = (
        "import sys; from mosaic.logfile import categorize_file; from mosaic.config import DEFAULT; "
        "r = categorize_file(sys.argv[1], DEFAULT); print(r['status'], 'scipy.spatial' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(quiet)], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["ok", "False"]
    assert "scipy.spatial" in WORKER_PRELOAD and "scipy.spatial" in PRELOAD
