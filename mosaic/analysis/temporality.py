"""Temporality on four equal chunks of the run (SPEC 3.6).

Bytes are placed where they were moved: each unmerged operation's bytes are
spread uniformly over its interval (clipped to the run, so the chunks always
sum to the direction's bytes), which keeps a long, light operation from
dragging a large one into every chunk it overlaps.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from mosaic.config import Settings

CHUNKS = 4


@dataclass(frozen=True)
class TemporalitySettings(Settings):
    """What :func:`labels` reads of the Config."""

    significant_bytes: float
    chunk_dominance: float
    chunk_minor_divisor: float
    chunk_middle_ratio: float
    steady_cv: float


def chunk_bytes(
    starts: ArrayLike, ends: ArrayLike, nbytes: ArrayLike, run_time: float
) -> NDArray[np.float64]:
    """Bytes per quarter of the run, each operation spread over its interval.

    Chunk k covers ``[k, k+1) x run_time / 4`` (the last one also its end): a
    zero-length operation puts all its bytes in the chunk of its instant, and
    an instant exactly on a boundary belongs to the later chunk.
    """
    width = float(run_time) / CHUNKS
    # np.minimum / np.maximum: np.clip's wrapper costs more than the work on small arrays
    begin = np.minimum(np.maximum(np.asarray(starts, dtype=float), 0.0), run_time)
    finish = np.minimum(np.maximum(np.asarray(ends, dtype=float), begin), run_time)
    volumes = np.asarray(nbytes, dtype=float)
    spans = finish > begin
    if spans.all():  # the usual case: no instant, nothing to select
        return _spread(begin, finish, volumes, width)
    instant_chunk = np.minimum(begin[~spans] // width, CHUNKS - 1).astype(np.int64)
    return _spread(begin[spans], finish[spans], volumes[spans], width) + np.bincount(
        instant_chunk, weights=volumes[~spans], minlength=CHUNKS
    )


def heatmap_chunk_bytes(
    bin_bytes: np.ndarray, bin_seconds: float, run_time: float, total: float
) -> NDArray[np.float64]:
    """Bytes per quarter of the run as a direction's HEATMAP bins place them (SPEC 3.6).

    A record's bytes spread over its first-to-last window put bytes in its
    idle gaps; the heatmap's bins hold what was moved in each. A bin across a
    quarter line is split by time (its bytes spread over it, as an operation
    of :func:`chunk_bytes`). The quarters keep the bins' shares but sum to
    ``total``, the direction's bytes from its records: the heatmap is per API,
    not per file, so it also holds traffic the name filter drops.
    """
    busy = (np.asarray(bin_bytes, dtype=float) > 0).nonzero()[0]
    starts = busy * bin_seconds
    chunks = chunk_bytes(starts, starts + bin_seconds, bin_bytes[busy], run_time)
    moved = float(chunks.sum())
    scaled: NDArray[np.float64] = chunks * (total / moved) if moved > 0 else chunks
    return scaled


def _spread(
    starts: NDArray[np.float64], ends: NDArray[np.float64], nbytes: NDArray[np.float64], width: float
) -> NDArray[np.float64]:
    """Per chunk, the bytes of operations of positive length, each in proportion to its overlap.

    One (chunks x operations) array, updated in place (a heavy trace has
    thousands of operations), a row per chunk so that each numpy pass runs
    along the operations: overlap / length, then times bytes (a rate in
    bytes/s could overflow). Each chunk's total adds its operations one after
    another in their order (a cumulative sum; numpy's pairwise sum of a row
    would round differently), as the (operations x chunks) layout summed over
    its rows did, at a quarter of its cost.
    """
    if not starts.size:
        return np.zeros(CHUNKS)
    edges = np.arange(CHUNKS + 1) * width
    spread = np.minimum(ends, edges[1:, None])
    spread -= np.maximum(starts, edges[:-1, None])
    np.maximum(spread, 0.0, out=spread)  # overlap of each operation with each chunk
    spread /= ends - starts
    spread *= nbytes
    per_chunk: NDArray[np.float64] = spread.cumsum(axis=1)[:, -1]
    return per_chunk


def coefficient_of_variation(values: Iterable[float]) -> float:
    """Population standard deviation / mean; infinite when the mean is 0.

    Chunks hold non-negative bytes, so a zero mean means no bytes at all:
    "no data" is not "evenly spread", and an infinite CV fails every
    ``< steady_cv`` test.
    """
    plain = [float(v) for v in values]  # two to four chunks: plain floats beat numpy calls
    mean = math.fsum(plain) / len(plain)
    if not mean > 0:
        return float("inf")
    return math.sqrt(math.fsum((v - mean) ** 2 for v in plain) / len(plain)) / mean


def labels(chunks: Iterable[float], total: float, settings: TemporalitySettings) -> list[str]:
    """Temporality labels (unprefixed) of one direction, in vocabulary order.

    ``total`` is the direction's bytes; below ``significant_bytes`` the only
    label is ``insignificant``.
    """
    if total < settings.significant_bytes:
        return ["insignificant"]
    q0, q1, q2, q3 = (float(q) for q in chunks)
    cv = coefficient_of_variation
    rules = {
        "on_start": q0 > settings.chunk_dominance * (q1 + q2 + q3),
        "on_end": q3 > settings.chunk_dominance * (q0 + q1 + q2),
        "after_start": (
            q0 < (q1 + q2 + q3) / settings.chunk_minor_divisor and cv([q1, q2, q3]) < settings.steady_cv
        ),
        "before_end": (
            q3 < (q0 + q1 + q2) / settings.chunk_minor_divisor and cv([q0, q1, q2]) < settings.steady_cv
        ),
        "after_start_before_end": q1 + q2 > settings.chunk_middle_ratio * (q0 + q3),
        "on_start_and_end": (
            q0 + q3 > settings.chunk_middle_ratio * (q1 + q2) and cv([q0, q3]) < settings.steady_cv
        ),
        "steady": cv([q0, q1, q2, q3]) < settings.steady_cv,
    }
    found = [name for name, holds in rules.items() if holds]
    return found or ["unclassified"]
