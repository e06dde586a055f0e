"""Scenarios of SPEC rules real logs exercise: MPI-IO stand-ins of a partial POSIX module,
DXT request cadence under min_period_seconds; truth from SPEC, scored through the pipeline."""

import numpy as np
import pytest

from mosaic.config import Config
from mosaic.corpus.pipeline import run
from mosaic.darshan import formats as F
from mosaic.darshan.reader import read_log
from mosaic.synth import truth
from mosaic.synth.catalog import BY_NAME
from mosaic.synth.corpus import write_scenarios
from mosaic.synth.evaluate import evaluate
from mosaic.synth.records import FileTable, dxt_segments
from mosaic.synth.scenarios import Phase, Scenario, build

CFG = Config()
NEW = ("partial_posix_lost_files", "read_dxt_request_cadence")


def test_dxt_requests_with_gaps_keep_their_slots():
    table = FileTable()
    table.add(np.array([table.name("/a")]), 0, bytes_read=10, read_start=2.0, read_end=6.0)
    seg = dxt_segments(table.table(), np.array([5], np.uint64), requests=4, busy=0.5)
    assert seg.starts.tolist() == [2.0, 3.0, 4.0, 5.0]
    assert seg.ends.tolist() == [2.5, 3.5, 4.5, 5.5]  # 0.5 s gaps: not back to back
    assert seg.lengths.tolist() == [4, 2, 2, 2] and not seg.is_write.any()


def test_lost_files_are_mpiio_rows_and_count_only_in_a_partial_log():
    s = Scenario("p", ranks=4, run_time=1000.0, noise=False, partial=True,
                 phases=(Phase("write", 0.0, 0.1, 1e6, shared=True),
                         Phase("write", 0.85, 0.15, 4e9, lost=True)))
    built = build(s, np.random.default_rng(0), "/scratch/x")
    rows = built.table.table()
    assert rows["module"].tolist() == [F.POSIX] + [F.MPIIO] * 4
    args = (rows, built.table.paths, built.design, built.run_time, CFG)
    partial = truth.families(truth.facts(*args, partial=True), CFG)
    assert partial["write_temporality"]["must"] == ["write_on_end"]  # 4 GB at the end
    whole = truth.families(truth.facts(*args, partial=False), CFG)
    assert whole["write_temporality"]["must"] == ["write_insignificant"]  # 1 MB of POSIX


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    out = tmp_path_factory.mktemp("edges")
    write_scenarios(out, 3, scenarios=tuple(BY_NAME[name] for name in NEW))
    return out


def test_lost_files_are_written_as_mpiio_records_under_a_partial_posix_bit(corpus):
    log = read_log(next((corpus / "partial_posix_lost_files").iterdir()))
    assert F.POSIX in log.partial_modules and log.job.partial
    mpiio = log.modules[F.MPIIO]
    lost = set(mpiio.ids.tolist())
    assert lost and not lost & set(log.modules[F.POSIX].ids.tolist())
    assert mpiio.canonical()["bytes_written"].sum() >= 2e9


def test_cadence_requests_are_traced_every_half_second_or_less(corpus):
    for path in (corpus / "read_dxt_request_cadence").iterdir():
        log = read_log(path)
        seg = log.dxt_posix
        phase_file = seg.ids[np.argmax(seg.lengths)]  # the input file moves the most bytes
        starts = np.sort(seg.starts[seg.ids == phase_file])
        assert len(starts) >= 48 and np.diff(starts).max() < 0.5 * 1.01


def test_pipeline_meets_the_truth_of_the_new_scenarios(corpus, tmp_path):
    run([str(corpus)], tmp_path, CFG, workers=0)
    scores = evaluate(tmp_path, corpus / "truth.jsonl")
    assert scores["traces"]["scored"] == 6 and scores["traces"]["accuracy"] == 1.0
