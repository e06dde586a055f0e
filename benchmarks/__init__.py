"""The benchmarks (benchmarks/README.md).

mosaic is imported before anything else here: its one-BLAS-thread setting (mosaic/__init__.py)
must precede numpy's loading OpenBLAS, or the numpy calls a benchmark times in its own process
spin BLAS threads that ``mosaic run`` never has (the signatures' ``compute_all`` measured 0.69
against 0.35 CPU-s that way, 2026-12-02, at the same wall time).
"""

import mosaic  # noqa: F401
