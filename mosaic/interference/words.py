"""A run's slowdown and its cause (SPEC 3.11) in words, for the job page and `mosaic explain`:
what the store's ``run_contention`` row says, as :func:`mosaic.interference.tables.run_contention`
lets the reader see it (another user's job reads "another job")."""

from __future__ import annotations

from typing import Any

from mosaic.config import DEFAULT, Config
from mosaic.interference.slow_runs import MANY, RUN
from mosaic.perfwords import si

NOT_JUDGED = (
    "Not judged: the store holds no slowdown of this run (its application has too few runs "
    "with a comparable I/O time, or the contention analysis has not run since it was stored)."
)


def _jobs(count: int) -> str:
    return f"{count:,} other job{'' if count == 1 else 's'}"


def _named(cause: dict[str, Any]) -> str:
    """The named run: its job id and application when the reader may see them."""
    if cause.get("job") == "another job" or cause.get("job_id") is None:
        return "another job"
    who = f"job {cause['job_id']}"
    if cause.get("application"):
        who += f" ({cause['application']}, uid {cause.get('uid')})"
    return who


def trait_words(config: Config) -> dict[str, str]:
    """What each aggressor trait of :func:`mosaic.interference.slow_runs.run_traits` means,
    with the settings it was judged by."""
    small = si(config.contention_small_request_bytes, "B")
    return {
        "n1": "N:1 I/O mode",
        "metadata": f"over {config.contention_metadata_rate:g} metadata requests/s during its I/O",
        "bandwidth": "the largest bandwidth share",
        "small_requests": f"small requests (under {small} on average)",
    }


def cause_text(cause: dict[str, Any], config: Config = DEFAULT) -> str:
    """Why a slow run was slow, from its stored cause."""
    others = int(cause.get("others", 0))
    if cause["kind"] == RUN:
        words = trait_words(config)
        traits = [words.get(t, t) for t in cause.get("traits", [])]
        said = f" ({', '.join(traits)})" if traits else ""
        return (
            f"{_named(cause)} moved {cause['share']:.0%} of the bytes that overlapped its I/O on "
            f"the same file system{said}; {_jobs(others)} overlapped it in all."
        )
    load = si(float(cause.get("load", 0.0)), "B/s")
    if cause["kind"] == MANY:
        return (
            f"many jobs at once: {_jobs(others)} overlapped its I/O, {load} together, above its "
            f"application's 95th percentile ({si(float(cause['p95_load']), 'B/s')})."
        )
    return f"not explained: {_jobs(others)} overlapped its I/O ({load}), no run and no crowd stands out."


def slowdown_text(contention: dict[str, Any] | None, config: Config = DEFAULT) -> str:
    """One sentence: the run's slowdown against its application's at low load, slow or not,
    and, when slow, its cause."""
    if contention is None or contention.get("slowdown") is None:
        return NOT_JUDGED
    ratio = float(contention["slowdown"])
    said = f"{ratio:.2f}x its application's I/O time per byte at low load"
    if not contention["slow"]:
        return f"Not slow: {said}, within its application's usual spread."
    cause = contention.get("cause")
    return f"Slow: {said}. Cause: " + (cause_text(cause, config) if cause else "not recorded.")
