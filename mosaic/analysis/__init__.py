"""The method of SPEC 3.3-3.7 on one trace (no I/O: :mod:`mosaic.logfile` reads files)."""

# Modules the analysis imports only on first use (scipy.fft for a significant
# direction, scipy.spatial when mean shift clusters): a one-log `mosaic categorize`
# of an insignificant log never pays for them, and batch and service workers
# preload them so that they fork warm.
IMPORTED_ON_FIRST_USE = ("scipy.fft", "scipy.spatial")
