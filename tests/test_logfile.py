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
    result = categorize_file("x.darshan", CFG)
    assert (result["status"], result["reason"]) == ("evicted", "internal_error")
    # A defect is named with the exception and where it was raised, never as bad data.
    assert result["detail"].startswith("IndexError: index 9 is out of bounds [at test_logfile.py:")
    assert " crash <- logfile.py:" in result["detail"]


def test_a_reader_defect_is_an_internal_error_not_unreadable(monkeypatch, shared_logs):
    def defect(*_args, **_kwargs):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr("mosaic.darshan.reader._read_bytes", defect)
    path = shared_logs[0]
    result = categorize_file(path, CFG)
    assert (result["status"], result["reason"]) == ("evicted", "internal_error")
    assert result["detail"].startswith(f"ZeroDivisionError on {path}: division by zero [at ")


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


def test_one_log_imports_scipy_fft_and_spatial_only_when_the_analysis_needs_them(tmp_path):
    """scipy.fft and scipy.spatial are ~a third of a one-log `mosaic categorize` (imports
    dominate it), and most logs of a year have no significant direction. The FFT of a
    significant direction imports scipy.fft; mean shift imports scipy.spatial once it
    clusters (one operation never does). Batch and service workers preload both."""
    log = tmp_path / "one_write.darshan"
    log.write_bytes(write_log(make_log()))  # 1 MB written: insignificant by default
    probe = (
        "import sys; from mosaic.logfile import categorize_file; from mosaic.config import Config; "
        "r = categorize_file(sys.argv[1], Config(significant_bytes=float(sys.argv[2]))); "
        "print(r['write']['periodicity'] != {}, 'scipy.fft' in sys.modules, 'scipy.spatial' in sys.modules)"
    )

    def imported(significant_bytes: float) -> list[str]:
        command = [sys.executable, "-c", probe, str(log), str(significant_bytes)]
        return subprocess.run(command, capture_output=True, text=True, check=True).stdout.split()

    assert imported(Config().significant_bytes) == ["False", "False", "False"]
    assert imported(1.0) == ["True", "True", "False"]
    assert {"scipy.fft", "scipy.spatial"} <= set(WORKER_PRELOAD) & set(PRELOAD)
