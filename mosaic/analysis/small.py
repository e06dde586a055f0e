"""Median and mean of the small arrays most traces have, without numpy's generic wrappers.

``np.median`` and ``np.mean`` check axes, dtypes and NaNs in Python before
doing the work: 10 to 90 us a call, more than the work itself on the handful
of numbers a trace usually has. These give the very same floats on finite
values (the same middle elements, the same sum divided by the same count).
"""

from __future__ import annotations

import numpy as np


def median(values: np.ndarray) -> float:
    """``np.median`` of a non-empty 1-D array of finite values."""
    ordered = np.sort(values)
    middle = len(ordered) // 2
    return float(ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2)


def mean(values: np.ndarray) -> float:
    """``np.mean`` of a non-empty 1-D array (booleans: the share of True)."""
    return float(values.sum()) / len(values)
