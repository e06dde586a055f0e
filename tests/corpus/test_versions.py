"""Every output of `mosaic run` says which version of mosaic made it, beside the
configuration hash; a new version does not resume an older one's results, and a store
and `mosaic eval` say when results of two versions are mixed (docs/release.md)."""

from __future__ import annotations

import json
import shutil

from click.testing import CliRunner

import mosaic
from mosaic.cli import main
from mosaic.config import Config
from mosaic.corpus import pipeline
from mosaic.corpus.store import Store
from mosaic.html.page import Assets, Page
from mosaic_testing.logs import REPO
from mosaic_testing.outputs import lines

LOGS = REPO / "tests/data/darshan-logs-runtime/darshan-main"  # nine logs, all valid
CONFIG = Config(significant_bytes=1e6)  # a method setting: the hash is not the default's
MADE = {"mosaic_version": mosaic.__version__, "config_hash": CONFIG.hash()}


def corpus(tmp_path):
    """The nine logs and one truncated copy, evicted."""
    folder = tmp_path / "logs"
    shutil.copytree(LOGS, folder, ignore=shutil.ignore_patterns("*.txt", "*.jsonl"))
    (folder / "cut.darshan").write_bytes((LOGS / "pub_two_series.darshan").read_bytes()[:3000])
    return folder


def test_every_output_records_the_version_beside_the_configuration_hash(tmp_path, capsys):
    summary = pipeline.run([corpus(tmp_path)], tmp_path / "out", CONFIG, workers=0)
    assert CONFIG.hash() != Config().hash()
    traces, evicted = lines(tmp_path / "out", "traces.jsonl"), lines(tmp_path / "out", "evicted.jsonl")
    assert len(traces) == 9 and len(evicted) == 1
    assert all({key: line[key] for key in MADE} == MADE for line in traces + evicted)
    written = json.loads((tmp_path / "out/summary.json").read_text())
    assert {key: written[key] for key in MADE} == MADE
    assert written["store_versions"] == summary["store_versions"] == [mosaic.__version__]
    with Store(tmp_path / "out/store.sqlite") as store:
        assert store.versions() == [mosaic.__version__]
    assert "warning" not in capsys.readouterr().err


def test_a_new_version_categorizes_again_and_the_store_says_it_mixes(tmp_path, monkeypatch, capsys):
    logs, out = corpus(tmp_path), tmp_path / "out"
    assert pipeline.run([logs], out, CONFIG, workers=0)["timings"]["categorized_now"] == 9
    assert pipeline.run([logs], out, CONFIG, workers=0)["timings"]["categorized_now"] == 0  # resumed
    monkeypatch.setattr(pipeline, "__version__", "9.0.0")
    summary = pipeline.run([logs], out, CONFIG, workers=0)
    assert summary["timings"]["categorized_now"] == 9  # results of 0.2.0 not taken as 9.0.0's
    assert summary["store_versions"] == [mosaic.__version__, "9.0.0"]
    assert {line["mosaic_version"] for line in lines(out, "traces.jsonl")} == {"9.0.0"}
    assert (
        f"warning: {out / 'store.sqlite'} now holds results of mosaic {mosaic.__version__}, 9.0.0"
        in capsys.readouterr().err
    )


def test_eval_says_when_results_of_two_versions_are_mixed(tmp_path):
    out = tmp_path / "out"
    pipeline.run([corpus(tmp_path)], out, CONFIG, workers=0)
    truth = tmp_path / "truth.jsonl"  # the folder's expected labels, as `mosaic synth` writes truth
    expected = [json.loads(line) for line in (LOGS / "expected.jsonl").read_text().splitlines()]
    truth.write_text("".join(json.dumps({**e, "families": e["expected"]}) + "\n" for e in expected))
    runner = CliRunner()
    alone = runner.invoke(main, ["eval", str(out), "--truth", str(truth)])
    assert alone.exit_code == 0, alone.output
    assert (
        alone.stdout.startswith(f"results of mosaic {mosaic.__version__}\n") and "warning" not in alone.stderr
    )
    # a line of an older run pasted in: no version (0.1.0 recorded none)
    older = {key: value for key, value in lines(out, "traces.jsonl")[0].items() if key not in MADE}
    with open(out / "traces.jsonl", "a") as fh:
        fh.write(json.dumps(older) + "\n")
    mixed = runner.invoke(main, ["eval", str(out), "--truth", str(truth), "--json"])
    assert mixed.exit_code == 0, mixed.output
    assert json.loads(mixed.stdout)["versions"] == [mosaic.__version__, "unrecorded"]
    assert mixed.stderr == (
        f"warning: these results mix versions of mosaic ({mosaic.__version__}, unrecorded): their "
        "labels may follow different rules; rerun `mosaic run` into a new --out\n"
    )


def test_html_pages_name_the_version_that_made_them():
    # every page of `mosaic explain` and `mosaic report` is a Page (.ci/wheel-smoke reads explain's)
    text = Page("a job", Assets(inline=False)).render()
    assert f'<meta name="generator" content="mosaic-io {mosaic.__version__}">' in text
    assert f"<footer>mosaic-io {mosaic.__version__}: " in text
