"""The heavy corpus: wide jobs, per-rank records of shared files, DXT, exact truth."""

import json

import numpy as np
import pytest
from click.testing import CliRunner

from mosaic.cli import main
from mosaic.config import Config
from mosaic.corpus.pipeline import run
from mosaic.darshan import formats as F
from mosaic.darshan.reader import read_log
from mosaic.synth.evaluate import evaluate
from mosaic.synth.heavy import HEAVY_SCENARIOS, generate_heavy
from mosaic.synth.records import DXT_REQUESTS, FileTable, dxt_segments
from mosaic.synth.scenarios import Periodic, Phase, Scenario, build


@pytest.fixture(scope="module")
def heavy(tmp_path_factory):
    out = tmp_path_factory.mktemp("heavy")
    generate_heavy(out, 2 * len(HEAVY_SCENARIOS), seed=7)
    return out


def test_shared_file_writers_get_one_record_each_spread_over_the_ranks():
    s = Scenario(
        "w",
        ranks=1024,
        run_time=1000.0,
        noise=False,
        phases=(Phase("write", 0.0, 0.5, 4096.0, shared=True, writers=4),),
    )
    rows = build(s, np.random.default_rng(0), "/scratch/x").table.table()
    assert rows["rank"].tolist() == [0, 341, 682, 1023]  # not rank -1
    assert len(set(rows["name"])) == 1 and rows["opens"].tolist() == [1, 1, 1, 1]
    assert rows["bytes_written"].tolist() == [1024] * 4
    assert (rows["write_start"] >= 0).all() and (rows["write_end"] <= 500).all()


def test_more_writers_than_ranks_is_one_record_per_rank():
    s = Scenario(
        "w",
        ranks=3,
        run_time=10.0,
        noise=False,
        periodic=(Periodic("write", 2.0, 0.5, 10.0, count=4, writers=8),),
    )
    rows = build(s, np.random.default_rng(0), "/scratch/x").table.table()
    assert len(rows) == 12 and sorted(set(rows["rank"].tolist())) == [0, 1, 2]


def test_dxt_segments_tile_each_record_and_keep_its_bytes():
    table = FileTable()
    table.add(
        np.array([table.name("/a"), table.name("/b")]),
        [0, 1],
        bytes_written=[10, 8],
        write_start=[0.0, 4.0],
        write_end=[8.0, 6.0],
        bytes_read=[0, 3],
        read_start=[0.0, 1.0],
        read_end=[0.0, 2.0],
    )
    seg = dxt_segments(table.table(), np.array([11, 22], np.uint64))
    assert DXT_REQUESTS == 4 and len(seg.ids) == 12  # 3 directions moved x 4 requests
    reads = ~seg.is_write
    assert seg.lengths[reads].tolist() == [3, 0, 0, 0]
    assert seg.starts[reads].tolist() == [1.0, 1.25, 1.5, 1.75]
    a = seg.is_write & (seg.ids == 11)
    assert seg.lengths[a].tolist() == [4, 2, 2, 2] and seg.offsets[a].tolist() == [0, 4, 6, 8]
    assert seg.starts[a].tolist() == [0.0, 2.0, 4.0, 6.0]
    assert seg.ends[a].tolist() == [2.0, 4.0, 6.0, 8.0]


def test_heavy_logs_are_wide_with_thousands_of_records(heavy):
    truth = [json.loads(line) for line in open(heavy / "truth.jsonl")]
    assert len(truth) == 10 and {t["scenario"] for t in truth} == {s.name for s in HEAVY_SCENARIOS}
    with_dxt = 0
    for t in truth:
        log = read_log(heavy / t["file"])
        posix = log.modules[F.POSIX]
        assert 512 <= log.job.nprocs <= 16_384 and t["params"]["ranks"] == log.job.nprocs
        assert len(posix.ids) >= 300
        if log.dxt_posix is not None:
            with_dxt += 1
            counters = posix.canonical()
            moved = counters["bytes_written"].sum() + counters["bytes_read"].sum()
            assert log.dxt_posix.lengths.sum() == moved
        names, counts = np.unique(posix.ids, return_counts=True)
        shared_per_rank, file_per_process = counts.max() >= 64, (counts == 1).sum() >= 512
        assert shared_per_rank or file_per_process
        assert (posix.ranks >= 0).all() or t["scenario"] == "heavy_irregular_dumps"
    assert with_dxt >= 1


def test_heavy_truth_is_met_by_the_pipeline(heavy, tmp_path):
    run([str(heavy)], tmp_path, Config(), workers=0)
    scores = evaluate(tmp_path, heavy / "truth.jsonl")
    assert scores["traces"]["scored"] == 10 and scores["traces"]["accuracy"] == 1.0


def test_cli_writes_the_heavy_corpus(tmp_path):
    result = CliRunner().invoke(main, ["synth", "heavy", str(tmp_path), "--count", "1"])
    assert result.exit_code == 0, result.output
    assert len((tmp_path / "truth.jsonl").read_text().splitlines()) == 1
