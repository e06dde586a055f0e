"""`mosaic figures` and `mosaic plot`. Imports only click: plotting loads on use."""

from __future__ import annotations

from pathlib import Path

import click

from mosaic.options import config_option, load_config, log_and_output


@click.command()
@click.argument("out", type=click.Path(exists=True, file_okay=False, path_type=Path))
@config_option
@click.option("--quiet", is_flag=True, help="No progress bar.")
def figures(out: Path, config_file: str | None, quiet: bool) -> None:
    """Render OUT/figures/*.png|svg and OUT/report.md from OUT/summary.json.

    Nothing is re-processed: thresholds given with --config change only what
    is displayed (heatmap cut-off, noteworthy-correlation thresholds, the
    support under which P(B | A) cells are grey). The figures are replaced as
    a set: a failure leaves the previous ones. Exits 1, naming the file and
    the key, when summary.json is missing or malformed.
    """
    if not (out / "summary.json").is_file():
        raise click.ClickException(
            f"{out / 'summary.json'} not found: run `mosaic run ... --out {out}` first"
        )
    from tqdm import tqdm

    from mosaic.report.figures import FIGURES, render_figures
    from mosaic.report.markdown import write_report
    from mosaic.report.summary import SummaryError, load_summary

    cfg = load_config(config_file)
    try:
        summary = load_summary(out)
        # tqdm's disable=None: no bar when stderr is not a terminal (a log file, a pipe)
        with tqdm(
            total=len(FIGURES) + 1, desc="figures", unit="file", disable=True if quiet else None
        ) as bar:
            drawn = render_figures(out, cfg, summary, on_drawn=lambda name: bar.update())
            report = write_report(out, cfg, summary)
            bar.update()
    except SummaryError as error:
        raise click.ClickException(str(error)) from None
    except OSError as error:
        raise click.ClickException(
            f"{out}: figures not written, the previous ones are kept: {error}"
        ) from None
    click.echo(
        f"{sum(data is not None for data in drawn.values())} figures in {out / 'figures'}, report in {report}"
    )


@click.command()
@log_and_output("Image to write (.png or .svg). Default: FILE's name + .timeline.png here.")
@config_option
def plot(file: Path, output: Path | None, config_file: str | None) -> None:
    """Draw one log FILE (or ARCHIVE/MEMBER of a tar archive) as a timeline (paper Fig. 2).

    Records (rank-file pairs) doing I/O before and after merging, periodic segments with their
    period, the four quarter chunks, the HEATMAP's bytes per bin (Darshan
    3.3+), the FFT spectrum and its peak, and metadata requests per second
    against the spike thresholds.
    """
    from mosaic.analysis.categorize import analyze
    from mosaic.errors import MEMORY_BOUND, LogError, Reason
    from mosaic.limits import limit_memory
    from mosaic.report.timeline import plot_timeline  # imported before the bound: matplotlib maps ~100 MB
    from mosaic.trace import read_trace

    cfg = load_config(config_file)
    output = output or Path(f"{file.name}.timeline.png")
    # The bound of `mosaic categorize` and of batch and service workers: a hostile log
    # (a HEATMAP of millions of bins in a few KB) is too_large here as there.
    limit_memory(cfg.worker_memory_bytes)
    try:
        analysis = analyze(read_trace(file, cfg), cfg)
        plot_timeline(analysis, cfg, output)
    except LogError as error:
        raise click.ClickException(f"{file}: evicted ({error.reason}): {error.detail}") from None
    except MemoryError:
        raise click.ClickException(f"{file}: evicted ({Reason.TOO_LARGE}): {MEMORY_BOUND}") from None
    click.echo(f"{output}: {', '.join(analysis.categories)}")
