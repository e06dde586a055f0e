"""HEATMAP bursts: a second source of operations for mean shift (SPEC 3.5).

A job that appends every checkpoint to one file has one record per rank
spanning the run: its operations merge into one and mean shift sees no
period, while the HEATMAP shows each checkpoint as a run of non-empty bins
between empty ones. With few periods the FFT cannot reach a far-beyond-chance
significance on such clean bursts (real DLIO readers: 4 s reads every ~8 s,
five epochs, 1.7-2.2 sigma), but mean shift's segments of the bursts are as
regular as the epochs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mosaic.analysis import merging
from mosaic.config import Config


@dataclass
class Bursts:
    """A direction's heatmap bursts, in time order, and those too slow to count."""

    starts: np.ndarray  # seconds from job start: the start of the burst's first bin
    ends: np.ndarray  # the end of its last bin
    bytes: np.ndarray  # bytes of its bins
    minor: np.ndarray  # bool: under SPEC 3.3's minor-rate limit, no segment of their own

    def __len__(self) -> int:
        return len(self.starts)


def heatmap_bursts(bin_bytes: np.ndarray, bin_seconds: float, config: Config) -> Bursts:
    """Each maximal run of consecutive non-empty bins of ``bin_bytes`` as one burst.

    The minor-operation rule of SPEC 3.3 applies (a few kB of interpreter
    start-up reads in one bin are no segment); bursts are never merged:
    empty bins already separate them.
    """
    busy = np.asarray(bin_bytes, dtype=float) > 0
    edges = np.diff(busy.astype(np.int8), prepend=0, append=0)
    first, after = (edges == 1).nonzero()[0], (edges == -1).nonzero()[0]
    cumulative = np.concatenate([[0.0], np.cumsum(np.asarray(bin_bytes, dtype=float))])
    starts, ends = first * bin_seconds, after * bin_seconds
    nbytes = cumulative[after] - cumulative[first]
    return Bursts(starts, ends, nbytes, merging.minor_mask(starts, ends, nbytes, config))
