"""The heap kept between logs (mosaic.limits.keep_heap), on the C library this machine runs."""

import ctypes
import subprocess
import sys

import pytest

from mosaic import limits
from mosaic_testing.written import heatmap_log

# Reads one log again and again in a fresh process (whose allocator history is
# known) and prints the page faults of one read once warmed up.
FAULTS_PER_READ = """
import resource, sys
from mosaic.darshan.reader import read_log
from mosaic.limits import keep_heap, limit_memory
data = open(sys.argv[1], "rb").read()
if sys.argv[2] == "keep":
    assert keep_heap()
elif sys.argv[2] == "bounded":  # what batch, service and command-line workers call
    limit_memory(1 << 30)
for _ in range(3):
    read_log(data)
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(10):
    read_log(data)
print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 10)
"""


def faults_per_read(path, mode: str) -> float:
    done = subprocess.run(
        [sys.executable, "-c", FAULTS_PER_READ, str(path), mode], capture_output=True, text=True, check=True
    )
    return float(done.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt and page-fault counts")
def test_a_kept_heap_reads_the_next_log_without_faulting_its_pages_in_again(tmp_path):
    # A HEATMAP of 200,000 bins inflates to 3.2 MB (12 MB once parsed): over glibc's
    # default mmap threshold, so by default every read maps its buffers afresh.
    path = tmp_path / "bins.darshan"
    path.write_bytes(heatmap_log(200_000))
    assert faults_per_read(path, "default") > 1000
    assert faults_per_read(path, "keep") < 10
    assert faults_per_read(path, "bounded") < 10


def test_without_mallopt_the_defaults_stay(monkeypatch):
    class NoMallopt:  # a C library that is not glibc (musl, macOS)
        def __init__(self, name):
            pass

    monkeypatch.setattr(ctypes, "CDLL", NoMallopt)
    limits.keep_heap.cache_clear()
    try:
        assert limits.keep_heap() is False
    finally:
        limits.keep_heap.cache_clear()
