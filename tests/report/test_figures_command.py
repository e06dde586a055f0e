"""`mosaic figures` as a command: a malformed summary.json is one clear error, the
figures are replaced as a set, and progress shows on a terminal only."""

import fcntl
import json
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from mosaic.cli import main
from mosaic.report import figures
from mosaic.report.summary import MAX_LABELS

MOSAIC = Path(sys.executable).with_name("mosaic")


def replaced(summary: dict, key: str, value) -> dict:
    """`summary` with the value at dotted `key` replaced (a copy)."""
    copy = json.loads(json.dumps(summary))
    *parents, last = key.split(".")
    node = copy
    for part in parents:
        node = node[part]
    node[last] = value
    return copy


def without(summary: dict, key: str) -> dict:
    copy = json.loads(json.dumps(summary))
    *parents, last = key.split(".")
    node = copy
    for part in parents:
        node = node[part]
    del node[last]
    return copy


def big_matrix(summary: dict) -> dict:
    """A 3,000-label matrix: drawn, it used to need 1.7 GB before a MemoryError."""
    labels = [f"label_{i}" for i in range(3000)]
    counts = {**summary["distributions"]["single_run"]["counts"], **dict.fromkeys(labels, 1.0)}
    copy = replaced(summary, "distributions.single_run.counts", counts)
    return replaced(copy, "jaccard.single_run", {"labels": labels, "matrix": []})


MALFORMED = {
    "not JSON": (lambda s: "{not json", "not JSON: Expecting property name"),
    "cut short": (lambda s: json.dumps(s)[:100], "not JSON"),
    "nested too deep": (lambda s: "[" * 100_000 + "]" * 100_000, "nested too deeply"),
    "not UTF-8": (lambda s: b"\xff\xfe{}", "not UTF-8"),
    "a list": (lambda s: [1, 2], "the top level: expected an object, found [1, 2]"),
    "no distributions": (lambda s: without(s, "distributions"), "summary.distributions: missing"),
    "a count as text": (lambda s: replaced(s, "funnel.logs", "12"), "funnel.logs: expected a count"),
    "a negative count": (lambda s: replaced(s, "funnel.evicted.truncated", -2), "funnel.evicted.truncated"),
    "NaN traces": (lambda s: replaced(s, "distributions.all_runs.traces", float("nan")), "all_runs.traces"),
    "no matrix": (
        lambda s: without(s, "conditional.all_runs.matrix"),
        "conditional.all_runs.matrix: missing",
    ),
    "a short row": (
        lambda s: replaced(s, "jaccard.single_run.matrix", [[0.5]] * 19),
        "jaccard.single_run.matrix[0]: expected a list of 19 numbers",
    ),
    "a share above 1": (
        lambda s: replaced(s, "jaccard.single_run.matrix", [[2.0] * 19] * 19),
        "jaccard.single_run.matrix[0][0]: expected a number in [0, 1], found 2.0",
    ),
    "an unknown label": (
        lambda s: replaced(s, "jaccard.all_runs.labels", ["nope"] * 19),
        'jaccard.all_runs.labels[0]: expected a label counted in distributions.all_runs.counts, found "nope"',
    ),
    "3,000 labels": (big_matrix, f"jaccard.single_run.labels: expected a list of at most {MAX_LABELS}"),
    "a histogram of other bins": (
        lambda s: replaced(s, "stability.histogram.counts", [1, 2]),
        "stability.histogram.counts: expected a list of 10 counts",
    ),
    "a period bound of 0": (lambda s: replaced(s, "config.period_second_max", 0), "config.period_second_max"),
}


@pytest.mark.parametrize("kind", list(MALFORMED))
def test_a_malformed_summary_is_one_error_naming_the_file_and_key(results_dir, summary, kind):
    """Each of these ended in a traceback (JSONDecodeError, TypeError, KeyError,
    RecursionError, MemoryError): now exit 1 with the file and the key, no figure touched."""
    make, message = MALFORMED[kind]
    (results_dir / "figures").mkdir()
    (results_dir / "figures" / "funnel.png").write_bytes(b"the previous funnel")
    before = {p.name: p.read_bytes() for p in (results_dir / "figures").iterdir()}
    content = make(summary)
    path = results_dir / "summary.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content if isinstance(content, str) else json.dumps(content))
    result = CliRunner().invoke(main, ["figures", str(results_dir)])
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit)  # a ClickException, not a traceback
    assert result.output.startswith(f"Error: {path}: ")
    assert message in result.output
    assert len(result.output) < 400  # an excerpt of the bad value, never all of it
    assert {p.name: p.read_bytes() for p in (results_dir / "figures").iterdir()} == before


# Two traces, six labels: every figure drawn, each heatmap with cells, in about half the CPU
# time of the conftest's 19 labels. The tests below are about the set of files a run leaves,
# not what the figures show (tests/report/test_figures.py checks that, on the full summary).
FEW_LABELS = [
    (["read_on_start", "write_on_end", "metadata_high_spike"], 4),
    (["read_on_start", "write_periodic", "write_periodic_minute", "metadata_insignificant_load"], 1),
]


@pytest.fixture
def small_summary(summary_factory) -> dict:
    return summary_factory(FEW_LABELS)


@pytest.fixture
def small_results(tmp_path, small_summary):
    """OUT holding the small summary.json."""
    (tmp_path / "summary.json").write_text(json.dumps(small_summary))
    return tmp_path


def test_a_failure_midway_leaves_the_previous_set_whole(small_results, small_summary, monkeypatch):
    """A crash after some figures were drawn used to leave new and old PNGs mixed."""
    assert CliRunner().invoke(main, ["figures", str(small_results)]).exit_code == 0
    folder = small_results / "figures"
    (folder / "mine.png").write_bytes(b"a user's own file")
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    changed = replaced(small_summary, "funnel.logs", 13)
    (small_results / "summary.json").write_text(json.dumps(changed))

    def crash(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(figures, "plot_conditional", crash)  # drawn after funnel, bars, jaccard
    result = CliRunner().invoke(main, ["figures", str(small_results)])
    assert result.exit_code == 1 and "No space left on device" in result.output
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    assert sorted(p.name for p in small_results.iterdir()) == ["figures", "report.md", "summary.json"]
    monkeypatch.undo()
    assert CliRunner().invoke(main, ["figures", str(small_results)]).exit_code == 0
    after = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert set(after) == set(before) and after["mine.png"] == b"a user's own file"
    assert all(after[name] != before[name] for name in ("funnel.png", "funnel.svg"))  # 13 logs now
    assert oct(folder.stat().st_mode & 0o777) == oct(0o777 & ~current_umask())


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_a_figure_no_longer_drawn_leaves_with_its_set(small_results, small_summary):
    """The stability figure of an --all-runs summary is gone once a summary without it is drawn."""
    assert CliRunner().invoke(main, ["figures", str(small_results)]).exit_code == 0
    (small_results / "summary.json").write_text(json.dumps({**small_summary, "stability": None}))
    assert CliRunner().invoke(main, ["figures", str(small_results)]).exit_code == 0
    names = {p.stem for p in (small_results / "figures").iterdir()}
    assert "stability" not in names and "funnel" in names


def on_a_terminal(*arguments: str) -> str:
    """`mosaic ARGUMENTS` with stderr on a pseudo-terminal; what it printed there."""
    leader, follower = pty.openpty()
    # 30 rows of 100 columns: a new pty is 0 x 0, where a bar has no room to be drawn
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    process = subprocess.Popen([str(MOSAIC), *arguments], stdout=subprocess.DEVNULL, stderr=follower)
    os.close(follower)
    seen = b""
    while True:
        ready, _, _ = select.select([leader], [], [], 120)
        if not ready:
            break
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # EIO: the process closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    os.close(leader)
    assert process.wait(timeout=120) == 0
    return seen.decode(errors="replace")


def test_progress_shows_on_a_terminal_unless_quiet(small_results):
    shown = on_a_terminal("figures", str(small_results))
    assert "figures: 100%" in shown and f"{len(figures.FIGURES) + 1}/{len(figures.FIGURES) + 1}" in shown
    assert "figures:" not in on_a_terminal("figures", "--quiet", str(small_results))


def test_no_progress_bar_into_a_pipe(small_results):
    done = subprocess.run([str(MOSAIC), "figures", str(small_results)], capture_output=True, text=True)
    assert done.returncode == 0 and done.stderr == ""


HOLD = (
    "import sys; from pathlib import Path; from mosaic.corpus.outputs import staging_folder\n"
    "with staging_folder(Path(sys.argv[1]), '.figures-') as path:\n"
    "    print(path, flush=True); sys.stdin.read()\n"
)
APPEAR_SECONDS = 60.0  # bound on waiting for the killed run's staging folder


@pytest.mark.slow  # two runs of the figures (~10 s on a quiet machine)
def test_a_killed_run_leaves_no_staging_folder_behind(small_results):
    """kill -9 of `mosaic figures` while it draws left OUT/.figures-XXXX for good (issue 45
    item 8). The next run removes it, and keeps the one a live run (here a process that
    holds its staging folder, waiting) is filling."""
    killed = subprocess.Popen([str(MOSAIC), "figures", "--quiet", str(small_results)])
    deadline = time.monotonic() + APPEAR_SECONDS
    while not list(small_results.glob(".figures-*")) and time.monotonic() < deadline:
        time.sleep(0.01)
    killed.kill()
    killed.wait()
    (stale,) = small_results.glob(".figures-*")
    holder = [sys.executable, "-c", HOLD, str(small_results)]
    live = subprocess.Popen(holder, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        held = Path(live.stdout.readline().strip())
        assert CliRunner().invoke(main, ["figures", str(small_results)]).exit_code == 0
        left = sorted(small_results.glob(".figures-*"))
    finally:
        live.communicate("")
    assert left == [held] and not stale.exists()
    assert not list(small_results.glob(".figures-*"))  # the live one removed its own
