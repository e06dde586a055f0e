"""MOSAIC: categorize HPC jobs' I/O behaviour from Darshan logs.

The small public API::

    import mosaic
    result = mosaic.categorize("job.darshan")   # the trace object (docs/method.md, 4)
    trace = mosaic.read_trace("job.darshan")     # columnar Trace
    cfg = mosaic.Config(significant_bytes=5e7)
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

# One BLAS / OpenMP thread per process, unless the user says otherwise: mosaic
# spreads work over processes (dispy workers, the service's pool), and BLAS
# threads on top only fight them for the same cores (an np.dot of 65,536
# values cost ~2 ms of CPU in OpenBLAS threads on a loaded 2-core machine).
# Set before numpy is imported; child processes inherit it.
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

from mosaic.config import DEFAULT, Config  # noqa: E402 - after the thread settings, which numpy reads
from mosaic.distribution import DISTRIBUTION, warn_if_shadowed  # noqa: E402
from mosaic.errors import LogError, Reason  # noqa: E402

# The one place the version is written: pyproject.toml reads it, every output records it
# beside the configuration hash. Bumped with every CHANGELOG release (docs/release.md:
# before 1.0, a change to any label or number is a minor bump).
__version__ = "0.4.0"
warn_if_shadowed()

if TYPE_CHECKING:
    from mosaic.analysis.categorize import TraceResult
    from mosaic.logfile import EvictedResult
    from mosaic.trace import Trace


def categorize(path: str | os.PathLike[str], config: Config | None = None) -> TraceResult | EvictedResult:
    """Categorize one log file; evicted logs give a dict with a reason."""
    from mosaic.logfile import categorize_file

    return categorize_file(path, config or DEFAULT)


def read_trace(path: str | os.PathLike[str], config: Config | None = None) -> Trace:
    """Read and clean one log into a Trace (raises LogError when evicted)."""
    from mosaic.trace import read_trace as _read

    return _read(path, config or DEFAULT)


__all__ = ["DISTRIBUTION", "Config", "LogError", "Reason", "__version__", "categorize", "read_trace"]
