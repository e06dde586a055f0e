"""MOSAIC: categorize HPC jobs' I/O behaviour from Darshan logs.

The small public API::

    import mosaic
    result = mosaic.categorize("job.darshan")   # SPEC section 4 dict
    trace = mosaic.read_trace("job.darshan")     # columnar Trace
    cfg = mosaic.Config(significant_bytes=5e7)
"""

from mosaic.config import Config
from mosaic.errors import LogError, Reason


def categorize(path, config: Config | None = None) -> dict:
    """Categorize one log file; evicted logs give a dict with a reason."""
    from mosaic.analysis.categorize import categorize_file

    return categorize_file(path, config or Config())


def read_trace(path, config: Config | None = None):
    """Read and clean one log into a Trace (raises LogError when evicted)."""
    from mosaic.trace import read_trace as _read

    return _read(path, config or Config())


__all__ = ["Config", "LogError", "Reason", "categorize", "read_trace"]
