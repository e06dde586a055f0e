"""Running sums of step arrays that are zero almost everywhere (SPEC 3.5's bandwidth
bins, SPEC 3.7's metadata seconds).

A rate or a density changes only where an operation or a window starts or
ends, a few bins among up to millions. A cumulative sum over every bin waits
for each add (~3 ns a bin, 20 times a plain add); summing the nonzero steps
and repeating each running value over its stretch gives the same bits.
"""

from __future__ import annotations

import numpy as np


def add_running_sum(totals: np.ndarray, steps: np.ndarray, scale: float = 1.0) -> None:
    """``totals += steps.cumsum() * scale``, in place, for bincount's totals and steps.

    Adding 0.0 changes no running sum nor total, and bincount never gives -0.0
    (the one zero that adding 0.0 would change), so the bits are those of the
    dense sum (but a NaN's sign). In place, the run-long arrays held at once
    are the totals, the steps and one stretch of running values.
    """
    changes = (steps != 0).nonzero()[0]
    if changes.size:
        lengths = np.empty(changes.size, np.int64)
        lengths[:-1] = changes[1:] - changes[:-1]
        lengths[-1] = steps.size - changes[-1]
        totals[changes[0] :] += (steps[changes].cumsum() * scale).repeat(lengths)
