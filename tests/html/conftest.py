"""A small year, run with every run categorized, and its report site (built once per session)."""

import io

import pytest
from tqdm import tqdm

from mosaic.config import Config
from mosaic.corpus.pipeline import run
from mosaic.html.site import build_site
from mosaic.synth.year import generate_year

YEAR_LOGS = 160
# Small bounds: 2 applications by runs + 2 by bytes, 1 job page each (the defaults are 10 and 2).
# The table's data in files of 10 rows: the site has several.
SITE_CONFIG = Config(
    report_top_applications=2, report_jobs_per_application=1, report_table_rows_per_file=10, all_runs=True
)


@pytest.fixture(scope="session")
def year_run(tmp_path_factory):
    """OUT of `mosaic run --all-runs` over a generated year (archives included)."""
    logs = tmp_path_factory.mktemp("html_year")
    generate_year(logs, YEAR_LOGS, seed=11, archive_share=0.3)
    out = tmp_path_factory.mktemp("html_out")
    run([logs], out, SITE_CONFIG, workers=0)
    return out


@pytest.fixture(scope="session")
def site(year_run):
    """OUT/report/ of the year, what the build counted, and the progress bar it reported to:
    a tqdm bar as `mosaic report` gives on a terminal (one starting at total=0 is falsy: the
    build once took it for no bar and drew nothing for the whole build)."""
    with tqdm(total=0, file=io.StringIO(), disable=False) as bar:
        counts = build_site(year_run, SITE_CONFIG, bar)
    return year_run / "report", counts, bar
