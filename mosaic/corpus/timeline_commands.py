"""`mosaic timeline`: the center's timeline out of a store (SPEC 3.10), and the loads again."""

from __future__ import annotations

import json
from pathlib import Path

import click

from mosaic.corpus.store_commands import _opened, store_argument
from mosaic.options import config_option, load_config


@click.group()
def timeline() -> None:
    """What the shared file systems carried, from a store's runs.

    \b
    mosaic timeline export STORE -o load.npz     numpy: np.load("load.npz")
    mosaic timeline export STORE -o load.csv     pandas: pd.read_csv("load.csv")
    mosaic timeline loads STORE                  every run's concurrent load again
    """


@timeline.command()
@store_argument
@click.option(
    "-o",
    "--out",
    "out",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="FILE.npz (arrays <fs>/start, <fs>/read, <fs>/write, <fs>/meta, <fs>/jobs) or FILE.csv.",
)
@click.option(
    "--bin-seconds",
    type=click.FloatRange(min=0, min_open=True),
    help="Bin width (default: timeline_bin_seconds).",
)
@config_option
def export(store_path: str, out: Path, bin_seconds: float | None, config_file: str | None) -> None:
    """Write the center's timeline per shared file system: bytes read and written, metadata
    requests and runs doing I/O per bin (edges at multiples of the bin since the epoch)."""
    from mosaic.corpus import timeline as tl

    if out.suffix not in (".npz", ".csv"):
        raise click.BadParameter(f"{out}: name a .npz or a .csv file", param_hint="--out")
    config = load_config(config_file)
    with _opened(store_path) as store:
        bins = tl.export(store, bin_seconds or config.timeline_bin_seconds, out)
    click.echo(json.dumps({"out": str(out), "bins": bins}))


@timeline.command()
@store_argument
@config_option
def loads(store_path: str, config_file: str | None) -> None:
    """Compute every stored run's concurrent load again (run_load, run_overlaps), and the
    hour-of-week means the forecast's background reads (timeline_week)."""
    from mosaic.corpus import timeline as tl

    config = load_config(config_file)
    with _opened(store_path) as store:
        runs, timelines = tl.loads_and_timeline(
            store, config.timeline_bin_seconds, kept=config.load_overlaps_kept
        )
        tl.save_week(store, tl.aggregates(timelines))
        click.echo(json.dumps({"runs": runs}))
