"""`mosaic explain` and `mosaic report`. Imports only click: the pages' modules load on use."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from mosaic.options import config_option, load_config, log_and_output


@click.command()
@log_and_output("Page to write. Default: FILE's name + .html here.")
@config_option
@click.option(
    "--store",
    "store",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="A results store (store.sqlite): place the run among its application's stored runs "
    "(p10 / p50 / p90 of bandwidth, I/O time, metadata rate; SPEC 3.9). Read only.",
)
def explain(file: Path, output: Path | None, config_file: str | None, store: Path | None) -> None:
    """Write one log FILE's page: one self-contained HTML file, nothing fetched when opened.

    Job facts, the labels and the numbers behind each, reads and writes per
    quarter, the `mosaic plot` timeline, and interactive charts (records doing
    I/O, HEATMAP bins, metadata requests per second, the FFT spectra: drag
    to zoom, hover for values). An evicted log gets a page saying why, and
    the command exits with status 1.
    """
    from mosaic.logfile import log_present

    if not log_present(file):  # a typo must not leave a page behind
        raise click.BadParameter(f"{file}: no such file (nor an archive holding it)", param_hint="FILE")
    from mosaic.corpus.outputs import write_atomically
    from mosaic.html.job import job_page  # loads matplotlib: before the memory bound
    from mosaic.html.page import Assets
    from mosaic.limits import limit_memory

    cfg = load_config(config_file)
    output = output or Path(f"{file.name}.html")
    limit_memory(cfg.worker_memory_bytes)  # as `mosaic plot`: a hostile log is too_large here too
    text, evicted = job_page(file, cfg, Assets(inline=True), store=store)
    write_atomically(output, lambda temp: temp.write_text(text, encoding="utf-8"))
    if evicted is not None:
        click.echo(f"{output}: {file} evicted ({evicted['reason']}): {evicted['detail']}", err=True)
        sys.exit(1)
    click.echo(str(output))


@click.command()
@click.argument("out", type=click.Path(exists=True, file_okay=False, path_type=Path))
@config_option
@click.option("--quiet", is_flag=True, help="No progress bar.")
def report(out: Path, config_file: str | None, quiet: bool) -> None:
    """Build OUT/report/, a static site of the year: open OUT/report/index.html.

    The funnel, label shares, co-occurrence, period and busy-time
    distributions and the paper's tables; every application in a table that
    sorts and filters in the browser; a page for each top application (by
    runs and by bytes, report_top_applications of each) with job pages of a
    few of its runs (report_jobs_per_application), read again from where
    the run found them. Needs OUT/summary.json (and OUT/store.sqlite for the
    applications) from `mosaic run`; nothing else is re-processed. Exits 1,
    naming the file and the key, when summary.json is missing or malformed.
    """
    if not (out / "summary.json").is_file():
        raise click.ClickException(
            f"{out / 'summary.json'} not found: run `mosaic run ... --out {out}` first"
        )
    import time

    from tqdm import tqdm

    from mosaic.html.site import build_site
    from mosaic.report.summary import SummaryError

    cfg = load_config(config_file)
    began = time.perf_counter()
    try:
        # tqdm's disable=None: no bar when stderr is not a terminal (a log file, a pipe)
        with tqdm(total=0, desc="report", unit="page", disable=True if quiet else None) as bar:
            counts = build_site(out, cfg, bar)
    except SummaryError as error:
        raise click.ClickException(str(error)) from None
    click.echo(
        f"{counts.pages:,} pages ({counts.application_pages} of applications among {counts.applications:,}, "
        f"{counts.job_pages} of jobs, {counts.evicted_job_pages} evicted), {counts.files:,} files, "
        f"{counts.bytes / 1e6:.1f} MB in {time.perf_counter() - began:.0f} s: "
        f"open {out / 'report' / 'index.html'}"
    )
