"""Scenarios of SPEC rules real logs exercise: MPI-IO stand-ins of a partial POSIX module,
DXT request cadence under min_period_seconds, checkpoints appended to one file (only the
HEATMAP shows them); truth from SPEC, scored through the pipeline."""

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
from mosaic.synth.scenarios import Periodic, Phase, Scenario, build, heatmap_bin_seconds

CFG = Config()
NEW = ("partial_posix_lost_files", "read_dxt_request_cadence", "write_periodic_appends_heatmap")


def test_dxt_requests_with_gaps_keep_their_slots():
    table = FileTable()
    table.add(np.array([table.name("/a")]), 0, bytes_read=10, read_start=2.0, read_end=6.0)
    seg = dxt_segments(table.table(), np.array([5], np.uint64), requests=4, busy=0.5)
    assert seg.starts.tolist() == [2.0, 3.0, 4.0, 5.0]
    assert seg.ends.tolist() == [2.5, 3.5, 4.5, 5.5]  # 0.5 s gaps: not back to back
    assert seg.lengths.tolist() == [4, 2, 2, 2] and not seg.is_write.any()


def test_lost_files_are_mpiio_rows_and_count_only_in_a_partial_log():
    s = Scenario(
        "p",
        ranks=4,
        run_time=1000.0,
        noise=False,
        partial=True,
        phases=(Phase("write", 0.0, 0.1, 1e6, shared=True), Phase("write", 0.85, 0.15, 4e9, lost=True)),
    )
    built = build(s, np.random.default_rng(0), "/scratch/x")
    rows = built.table.table()
    assert rows["module"].tolist() == [F.POSIX] + [F.MPIIO] * 4
    args = (rows, built.table.paths, built.design, built.run_time, CFG)
    partial = truth.families(truth.facts(*args, partial=True), CFG)
    assert partial["write_temporality"]["must"] == ["write_on_end"]  # 4 GB at the end
    whole = truth.families(truth.facts(*args, partial=False), CFG)
    assert whole["write_temporality"]["must"] == ["write_insignificant"]  # 1 MB of POSIX


@pytest.mark.parametrize(
    "run_time, width", [(51.2, 0.1), (51.3, 0.2), (102.4, 0.2), (102.5, 0.4), (1.0, 0.1)]
)
def test_heatmap_bins_double_from_a_tenth_of_a_second_to_at_most_512(run_time, width):
    assert heatmap_bin_seconds(run_time) == pytest.approx(width)


def test_appended_bursts_are_one_record_per_rank_and_a_heatmap_of_the_same_bytes():
    s = Scenario(
        "a",
        ranks=2,
        run_time=None,
        noise=False,
        periodic=(Periodic("write", 20.0, 0.5, 1001.0, count=3, offset=0.5, append=True),),
    )
    built = build(s, np.random.default_rng(0), "/scratch/x")
    rows = built.table.table()
    # Bursts [10, 20], [30, 40], [50, 60]; run 60 s (last start + 0.5 x period).
    assert built.run_time == 60.0 and rows["rank"].tolist() == [0, 1]
    assert rows["write_start"].tolist() == [10.0, 10.0] and rows["write_end"].tolist() == [60.0] * 2
    assert rows["bytes_written"].tolist() == [1502, 1501] and len(set(rows["name"])) == 1
    hm = built.heatmap
    assert hm.apis.tolist() == ["heatmap:POSIX"] * 2 and hm.bin_seconds.tolist() == [0.2, 0.2]
    assert hm.nbins.tolist() == [300, 300] and not hm.read_bins.any()  # 600 x 0.1 s > 512
    bins = hm.write_bins.reshape(2, 300)
    assert bins.sum(axis=1).tolist() == [1502, 1501]
    busy = np.flatnonzero(bins[1])
    assert busy.min() == 50 and busy.max() == 299  # 10 s / 0.2 s .. 60 s / 0.2 s - 1
    assert not bins[1, 100:150].any()  # nothing between the bursts (20-30 s)
    assert built.design["heatmap_only"].all() and len(built.design) == 3


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
    assert scores["traces"]["scored"] == 9 and scores["traces"]["accuracy"] == 1.0
