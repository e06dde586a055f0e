"""docs/tour.sh, the README's five-minute tour, runs as written: every line, in a folder set
up as `make run` leaves the repository (a sample year in data/sample, the venv in .venv,
the test logs under tests/), the sample small and the server on a free port."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from mosaic_testing.ports import free_port

REPO = Path(__file__).resolve().parents[1]
TOUR = REPO / "docs" / "tour.sh"
MOSAIC = Path(sys.executable).with_name("mosaic")
SAMPLE_LOGS = 100  # enough for a periodic application (the 3,000 of `make run` take minutes)


def commands(script: str) -> list[str]:
    """The tour's command lines (comments and blank lines are not run)."""
    return [line for line in script.splitlines() if line.strip() and not line.lstrip().startswith("#")]


@pytest.mark.slow
def test_every_line_of_the_tour_runs_as_written(tmp_path):
    (tmp_path / ".venv").symlink_to(sys.prefix)  # the venv `make run` makes, this one
    (tmp_path / "tests").symlink_to(REPO / "tests")
    subprocess.run(
        [MOSAIC, "synth", "year", "data/sample", "--count", str(SAMPLE_LOGS), "--seed", "2019"],
        cwd=tmp_path,
        check=True,
        capture_output=True,
    )
    port = free_port()
    script = TOUR.read_text()
    assert "8420" in script and "set -euo pipefail" in script  # a failing line stops the tour
    tour = subprocess.Popen(
        ["bash", "-x", "-c", script.replace("8420", str(port))],  # -x: each command on stderr as run
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its server goes with it, whatever happens
    )
    try:
        out, err = tour.communicate(timeout=600)
    finally:
        try:
            os.killpg(tour.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    assert tour.returncode == 0, err[-4000:]
    ran = [line[2:] for line in err.splitlines() if line.startswith("+ mosaic ")]
    for command in (
        "categorize",
        "plot",
        "run",
        "figures",
        "eval",
        "apps",
        "serve",
        "lookup",
        "report",
        "explain",
    ):
        assert any(line.startswith(f"mosaic {command} ") for line in ran), (command, ran)
    assert (tmp_path / "results" / "trace.png").stat().st_size > 0
    assert (tmp_path / "results" / "report" / "index.html").is_file()
    assert (tmp_path / "results" / "job.html").is_file()
    # every output under results/ (git-ignored): nothing left in the repository's root
    assert sorted(p.name for p in tmp_path.iterdir()) == [".venv", "data", "results", "tests"]
    lines = out.splitlines()
    # the lookup on the store of every run: the profile built from all of them
    assert any(line.startswith("profile of ") and "every stored run" in line for line in lines)
    assert (
        lines[0].startswith('{"file": "tests/data/darshan-logs/release_logs/')
        and '"status": "ok"' in lines[0]
    )
    assert any(line.startswith("trace accuracy") for line in lines)
    assert any(line.startswith("period write, ") and "(median " in line for line in lines)  # the lookup


def test_the_tour_leaves_out_nothing_a_newcomer_needs():
    """The lines the test runs are the tour's lines: none is hidden behind a comment."""
    lines = commands(TOUR.read_text())
    assert lines[:2] == ["set -euo pipefail", "source .venv/bin/activate"]
    assert all(line.startswith(("mosaic ", "IFS=", "until ", "kill ")) for line in lines[2:]), lines


def test_the_readme_shows_the_tour_that_runs():
    """README's tour block is docs/tour.sh's lines from `source` on, so what a newcomer
    reads is what the test above runs."""
    readme = (REPO / "README.md").read_text()
    tour = TOUR.read_text().splitlines()
    shown = tour[tour.index("source .venv/bin/activate") :]
    block = readme.split("```bash\nsource .venv/bin/activate\n", 1)[1].split("```", 1)[0]
    assert ["source .venv/bin/activate", *block.rstrip("\n").splitlines()] == shown
