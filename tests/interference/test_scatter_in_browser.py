"""The application page's scatter (SPEC 3.11) in a real browser (Debian's chromium through
playwright; skips without them): it loads clean and draws, on the interim inputs of the
real interference logs."""

import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from mosaic.config import Config
from mosaic.corpus.store import Store
from mosaic.html.page import Assets, Page
from mosaic.interference.analyse import analyse
from mosaic.interference.page import load_chart
from mosaic_testing.contention_tables import fill, interference_rows

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def test_the_scatter_loads_clean_and_draws(tmp_path):
    playwright = pytest.importorskip("playwright.sync_api", reason="playwright not installed")
    if not Path(CHROMIUM).is_file():
        pytest.skip(f"no chromium at {CHROMIUM}")
    with Store(tmp_path / "s.sqlite") as store:
        fill(store, **interference_rows())
        analyse(store, Config(contention_min_runs=8))
        with store._snapshot() as db:
            chart, said = load_chart(db, "0:/opt/mosaic-ifs/bin/lmp_restart")
    page = Page("lmp_restart", Assets(inline=True))
    page.add("File-system load", said + page.chart(chart))
    (tmp_path / "page.html").write_text(page.render())
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            shown = browser.new_page(viewport={"width": 1000, "height": 700})
            problems: list[str] = []
            shown.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
            shown.on("pageerror", lambda error: problems.append(str(error)))
            shown.goto((tmp_path / "page.html").as_uri(), wait_until="load")
            assert shown.locator("#contention canvas").count() == 1
            shown.locator("#contention").screenshot(path=str(tmp_path / "chart.png"))
        finally:
            browser.close()
    assert problems == []
    pixels = np.asarray(Image.open(tmp_path / "chart.png").convert("L"), dtype=float)
    assert pixels.std() > 10 and len(np.unique(pixels)) > 20  # drawn, not blank
