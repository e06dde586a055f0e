"""The file systems' load over the year (SPEC 3.10) from summary.json's ``timeline``.

Two figures, drawn only when the summary has a timeline with a shared file system:

- ``load``: per shared file system, the mean read and write rates (MB/s) and
  metadata requests per second of each hour (thin) and of each UTC day (thick);
- ``load_week``: per shared file system, the mean read + write rate of each hour
  of the week (Monday 00 h top left), the hours the timeline spans averaged.

Every value is a lower bound: runs without a Darshan log, evicted logs and lost
records are not in it; the coverage line under the title says what is.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import seaborn as sns
from matplotlib.dates import AutoDateLocator, ConciseDateFormatter

from mosaic.report.style import PALETTE, new_figure, save_png_svg, themed
from mosaic.report.summary import SummaryError

MAX_FILE_SYSTEMS = 8  # drawn at most (the busiest by bytes); a summary may name more
MAX_HOURS = 24 * 366 * 5  # five years of hours: past it a summary is refused
DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
MB = 1e6


def _series(entry: Mapping[str, Any], period: str, name: str) -> dict[str, Any]:
    """One period's series of a file system, checked: numbers of equal lengths."""
    key = f"timeline.file_systems.{name}.{period}"
    part = entry.get(period)
    if not isinstance(part, dict):
        raise SummaryError(f"summary.json: {key}: expected an object")
    out: dict[str, Any] = {}
    for field in ("first", "seconds"):
        value = part.get(field)
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise SummaryError(f"summary.json: {key}.{field}: expected a number")
        out[field] = float(value)
    if out["seconds"] <= 0:
        raise SummaryError(f"summary.json: {key}.seconds: expected a positive number")
    length = None
    for field in ("read", "write", "meta"):
        values = part.get(field)
        if (
            not isinstance(values, list)
            or len(values) > MAX_HOURS
            or (length is not None and len(values) != length)
        ):
            raise SummaryError(f"summary.json: {key}.{field}: expected a list of at most {MAX_HOURS} numbers")
        array = np.asarray(values, dtype=object)
        if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
            raise SummaryError(f"summary.json: {key}.{field}: expected numbers")
        out[field] = array.astype(float)
        length = len(values)
    return out


def _file_systems(summary: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    timeline = summary.get("timeline")
    if not isinstance(timeline, dict):
        return {}
    systems = timeline.get("file_systems")
    if not isinstance(systems, dict):
        return {}
    entries = {k: v for k, v in systems.items() if isinstance(v, dict)}
    busiest = sorted(
        entries,
        key=lambda k: (
            -float(entries[k].get("write_bytes", 0) or 0) - float(entries[k].get("read_bytes", 0) or 0)
        ),
    )
    return {k: entries[k] for k in sorted(busiest[:MAX_FILE_SYSTEMS])}


def coverage_line(summary: Mapping[str, Any]) -> str:
    coverage = summary.get("timeline", {}).get("coverage", {})
    if not isinstance(coverage, dict):
        return ""
    sources = coverage.get("sources", {})
    by = ", ".join(f"{n:,} from {s}" for s, n in sources.items()) if isinstance(sources, dict) else ""
    return (
        f"{coverage.get('runs', 0):,} runs ({by}); "
        f"{coverage.get('evicted_logs', 0):,} evicted logs not in it, "
        f"{coverage.get('partial_logs', 0):,} partial ones counted"
    )


def _short(name: str, chars: int) -> str:
    """A mount point for a legend or a title: its start and end around an ellipsis past ``chars``."""
    return name if len(name) <= chars else f"{name[: chars // 2 - 1]}\u2026{name[-(chars // 2) :]}"


def _dates(first: float, seconds: float, n: int) -> np.ndarray:
    stamps: np.ndarray = np.datetime64(int(first), "s") + (np.arange(n) * seconds).astype("timedelta64[s]")
    return stamps


@themed("ticks")
def plot_load(summary: dict[str, Any], out_dir: Path) -> dict[str, Any] | None:
    """Per day and per hour: read and write MB/s and metadata requests/s of each shared file system."""
    systems = _file_systems(summary)
    if not systems:
        return None
    fig = new_figure(figsize=(11, 7.5))
    axes = fig.subplots(3, 1, sharex=True)
    data: dict[str, Any] = {}
    for i, (name, entry) in enumerate(systems.items()):
        color = PALETTE[i % len(PALETTE)]
        hourly, daily = _series(entry, "hourly", name), _series(entry, "daily", name)
        data[name] = {"hourly": hourly, "daily": daily}
        for ax, field, scale in zip(axes, ("read", "write", "meta"), (MB, MB, 1.0)):
            h = hourly[field] / hourly["seconds"] / scale
            d = daily[field] / daily["seconds"] / scale
            # steps closed at their last period's end: a single hour or day is a visible segment
            hours = _dates(hourly["first"], hourly["seconds"], len(h) + 1)
            ax.step(hours, np.r_[h, h[-1:]], where="post", color=color, linewidth=0.6, alpha=0.5)
            days = _dates(daily["first"], daily["seconds"], len(d) + 1)
            ax.step(days, np.r_[d, d[-1:]], where="post", color=color, linewidth=2.0, label=_short(name, 40))
    for ax, label in zip(axes, ("read (MB/s)", "written (MB/s)", "metadata (requests/s)")):
        ax.set_ylabel(label)
        ax.set_ylim(bottom=0)
    locator = AutoDateLocator()  # type: ignore[no-untyped-call]
    axes[-1].xaxis.set_major_locator(locator)
    axes[-1].xaxis.set_major_formatter(ConciseDateFormatter(locator))  # type: ignore[no-untyped-call]
    axes[0].legend(loc="upper right", title="shared file system", fontsize="small")
    fig.suptitle(
        "What the shared file systems carried: mean of each hour (thin) and of each UTC day (thick)\n"
        f"{coverage_line(summary)}: a lower bound",
        fontsize="medium",
    )
    sns.despine(fig)
    save_png_svg(fig, out_dir, "load")
    return data


@themed("white")
def plot_load_week(summary: dict[str, Any], out_dir: Path) -> dict[str, Any] | None:
    """Hour of the week (rows Monday to Sunday, columns 00-23 h UTC): mean read + write MB/s."""
    systems = _file_systems(summary)
    if not systems:
        return None
    fig = new_figure(figsize=(12, 2.9 * len(systems) + 0.6), layout="constrained")
    axes = np.atleast_1d(fig.subplots(len(systems), 1, squeeze=False)[:, 0])
    data: dict[str, Any] = {}
    for ax, (name, entry) in zip(axes, systems.items()):
        week = entry.get("hour_of_week")
        key = f"timeline.file_systems.{name}.hour_of_week"
        if not isinstance(week, dict):
            raise SummaryError(f"summary.json: {key}: expected an object")
        rates = []
        for field in ("read_rate", "write_rate"):
            values = week.get(field)
            if not isinstance(values, list) or len(values) != 168:
                raise SummaryError(f"summary.json: {key}.{field}: expected 168 numbers")
            rates.append(np.asarray(values, dtype=float))
        grid = ((rates[0] + rates[1]) / MB).reshape(7, 24)
        data[name] = grid
        image = ax.imshow(grid, aspect="auto", cmap="rocket_r", vmin=0)
        ax.set_yticks(range(7), DAYS)
        ax.set_xticks(range(0, 24, 2), [f"{h:02d}" for h in range(0, 24, 2)])
        ax.set_title(
            f"{_short(name, 60)}: mean read + write MB/s by hour of the week (UTC)", fontsize="medium"
        )
        fig.colorbar(image, ax=ax, label="MB/s", fraction=0.03)
    axes[-1].set_xlabel("hour of the day (UTC)")
    save_png_svg(fig, out_dir, "load_week")
    return data


def plots(summary: dict[str, Any]) -> dict[str, Callable[[Path], Any]]:
    """The load figures this summary can draw (none without a timeline)."""
    if not _file_systems(summary):
        return {}
    return {"load": partial(plot_load, summary), "load_week": partial(plot_load_week, summary)}
