"""The memory bound every analysing process runs under (batch workers and service workers)."""

from __future__ import annotations

import os
import resource


def limit_memory(extra_bytes: int) -> None:
    """Cap this process's address space at its current size plus `extra_bytes`
    (RLIMIT_AS): past it, allocations fail with MemoryError (evicted
    ``too_large``) instead of the machine swapping. Relative, because a worker
    forked from a warm parent already maps numpy and scipy; never above an
    existing hard limit."""
    with open("/proc/self/statm") as fh:
        mapped = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    limit = mapped + extra_bytes
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
