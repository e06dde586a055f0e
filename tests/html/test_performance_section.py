"""The job page's "Performance" section (SPEC 3.9) and `mosaic explain --store`."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from click.testing import CliRunner

from mosaic.cli import main as cli
from mosaic.config import DEFAULT
from mosaic.corpus import perfstore
from mosaic.corpus.store import Store
from mosaic.html.performance import performance_html
from mosaic.trace import read_trace

DATA = Path(__file__).resolve().parents[1] / "data"
IMBALANCED = DATA / "darshan-logs" / "imbalanced_io" / "imbalanced-io.darshan"
VICTIM = DATA / "darshan-logs-interference" / "logs" / "root_lmp_restart_id70013-12_12-1-86-7_1.darshan"


def _perf(write_time: float | None, lower_bound: bool = False) -> dict:
    write = {
        "bytes": 4e8,
        "time": write_time,
        "bandwidth": 4e8 / write_time if write_time else None,
        "time_share": write_time / 10 if write_time else None,
    }
    return {
        "job": {
            "read": {"bytes": 0.0, "time": 0.0, "bandwidth": None, "time_share": 0.0},
            "write": write,
            "total": dict(write),
            "lower_bound": lower_bound,
            "mode": "N:1",
            "metadata_requests": 8,
            "metadata_per_second": 4.0 if write_time else None,
            "ranks_doing_io": None,
            "ranks_source": None,
            "nprocs": 4,
            "sizes": {"read": None, "write": None},
        },
        "modules": {},
        "darshan_util": {
            "POSIX": {
                "records": 1,
                "total_bytes": 4e8,
                "agg_time_by_slowest": 0.0,
                "agg_perf_by_slowest": None,
            }
        },
        "left_out": {"records": 0, "bytes": 0.0, "stand_ins": 0},
    }


def test_a_time_no_counter_recorded_reads_not_known_never_0():
    text = performance_html(_perf(None))
    write_row = text.split("<td>write</td>")[1].split("</tr>")[0]
    assert "not known (bytes moved, no time counter set)" in write_row
    assert "0 s" not in write_row and "0.0\u00a0%" not in write_row
    assert "agg_perf_by_slowest" in text and "<td>not known</td>" in text  # darshan-util printed 0
    assert "not known: shared files moved bytes" in text  # the ranks doing I/O
    assert "8 (not known per second: no I/O time)" in text


def test_a_partial_log_reads_at_least():
    perf = read_trace(IMBALANCED, DEFAULT).performance
    text = performance_html(perf)
    assert "Partial log:" in text and "<strong>at least</strong>" in text
    assert "at least 133.3\u00a0GB" in text and "at least 1,094\u00a0s" in text  # 133,316,609,547 B; writes
    assert "counts 2 MPI-IO record(s) standing in for lost POSIX ones" in text


def test_the_job_page_has_the_section_and_explain_store_places_the_run(tmp_path):
    store = tmp_path / "store.sqlite"
    with Store(store):
        pass
    group = read_trace(VICTIM, DEFAULT).group_key()
    db = sqlite3.connect(store)
    for i in range(1, 11):  # 10 runs writing 10..100 MB/s for 1 s (hand-filled)
        perf = _perf(1.0)
        perf["job"]["write"].update(bytes=i * 1e7, bandwidth=i * 1e7)
        db.execute(perfstore.INSERT, perfstore.row(i, group, {}, perf))
    db.commit()
    db.close()
    page = tmp_path / "victim.html"
    done = CliRunner().invoke(cli, ["explain", str(VICTIM), "-o", str(page), "--store", str(store)])
    assert done.exit_code == 0, done.output
    text = page.read_text()
    assert '<section id="performance">' in text or 'id="performance"' in text
    # its write bandwidth: 201,326,592 B / 5.16 s = 39.1 MB/s, above 3 of the 10 runs
    assert (
        "write bandwidth 39.1\u00a0MB/s, slower than 70\u00a0% of its 10 runs (median 55\u00a0MB/s)" in text
    )
    # without --store: no history part
    plain = tmp_path / "plain.html"
    assert CliRunner().invoke(cli, ["explain", str(VICTIM), "-o", str(plain)]).exit_code == 0
    assert "Against its application's runs" not in plain.read_text()


def test_the_application_page_shows_the_history():
    from mosaic.html.applications import _performance

    history = {
        "runs": 3,
        "complete_runs": 2,
        "metrics": {"write_bandwidth": {"runs": 2, "p10": 2.1e8, "p50": 2.5e8, "p90": 2.9e8, "unit": "B/s"}},
    }
    text = _performance(history)
    assert "Over the 2 of its 3 valid runs with a whole log" in text
    assert (
        "<td>write bandwidth</td><td>2</td><td>210\u00a0MB/s</td><td>250\u00a0MB/s</td><td>290\u00a0MB/s</td>"
        in text
    )
    assert "No figure is known" in _performance({"runs": 1, "complete_runs": 0, "metrics": {}})
