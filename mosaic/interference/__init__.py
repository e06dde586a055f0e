"""Who slows whom (SPEC 3.11): pure statistics over per-run arrays, and the step that reads
the store's per-run performance and load tables and writes what they say.

- :mod:`mosaic.interference.sensitivity`: per application, is its I/O time ranked with the
  load it met (Spearman, Benjamini-Hochberg across applications), and by how much.
- :mod:`mosaic.interference.slow_runs`: which runs were slow against their application's
  own low-load runs, and which overlapping run (or crowd) explains it.
- :mod:`mosaic.interference.conflicts`: the victim label x aggressor label matrix, fitted
  jointly by one least squares.
- :mod:`mosaic.interference.analyse`: the store step run at the end of ``mosaic run``.
"""
