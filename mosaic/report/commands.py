"""`mosaic figures` and `mosaic plot`. Imports only click: plotting loads on use."""

from __future__ import annotations

from pathlib import Path

import click

from mosaic.cli import _config, config_option


@click.command()
@click.argument("out", type=click.Path(exists=True, file_okay=False, path_type=Path))
@config_option
def figures(out: Path, config_file: str | None) -> None:
    """Render OUT/figures/*.png|svg and OUT/report.md from OUT/summary.json.

    Nothing is re-processed: thresholds given with --config change only what
    is displayed (heatmap cut-off, noteworthy-correlation thresholds).
    """
    if not (out / "summary.json").is_file():
        raise click.ClickException(f"{out / 'summary.json'} not found: run `mosaic run ... --out {out}` first")
    from mosaic.report.figures import render_figures
    from mosaic.report.markdown import write_report

    cfg = _config(config_file)
    drawn = render_figures(out, cfg)
    report = write_report(out, cfg)
    click.echo(f"{sum(data is not None for data in drawn.values())} figures in {out / 'figures'}, "
               f"report in {report}")
