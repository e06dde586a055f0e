"""Scenario records, broken logs per eviction reason, the scenario corpus and its CLI."""

import json

import numpy as np
import pytest
from click.testing import CliRunner

from mosaic.cli import main
from mosaic.config import Config
from mosaic.darshan import formats as F
from mosaic.darshan import reader
from mosaic.errors import LogError
from mosaic.synth.catalog import BY_NAME, SCENARIOS
from mosaic.synth.corpus import Template, write_scenarios
from mosaic.synth.logs import INVALID_REASONS, Format, darshan_log, invalid_log, make_job, write
from mosaic.synth.scenarios import MetadataLoad, Periodic, Phase, Range, Scenario, build, drawn, resolve

CFG = Config()


def test_ranges_resolve_inside_their_bounds():
    rng = np.random.default_rng(1)
    values = [resolve(Range(10, 1000, integer=True), rng) for _ in range(200)]
    assert min(values) >= 10 and max(values) <= 1000 and all(d == int(d) for d in values)
    scenario = resolve(BY_NAME["write_periodic_minute"], rng)
    assert 90 <= scenario.periodic[0].period <= 1200 and not isinstance(scenario.ranks, Range)


def test_build_needs_every_range_drawn():
    """A Range left in a scenario is a bug in the caller: build refuses it instead of computing with it."""
    assert drawn(2.5) == 2.5
    with pytest.raises(TypeError, match="not drawn"):
        drawn(Range(1, 2))
    coin = Phase("write", 0.1, 0.2, 1e9, shared=Range(0, 1, log=False, integer=True))
    with pytest.raises(TypeError, match="not drawn"):
        build(Scenario("undrawn", ranks=4, phases=(coin,)), np.random.default_rng(0), "/scratch/x")
    drawn_shared = resolve(coin, np.random.default_rng(0)).shared
    assert drawn_shared in (0.0, 1.0)  # a coin: a shared file or one per rank


def test_periodic_bursts_are_one_file_each():
    s = Scenario(
        "p",
        ranks=8,
        run_time=None,
        noise=False,
        periodic=(Periodic("write", 100.0, 0.2, 1e9, count=5, offset=0.5),),
    )
    built = build(s, np.random.default_rng(0), "/scratch/x")
    rows = built.table.table()
    assert len(rows) == 5 and set(rows["rank"]) == {-1} and set(rows["opens"]) == {8}
    assert rows["write_start"].tolist() == [50.0, 150.0, 250.0, 350.0, 450.0]
    assert rows["write_end"].tolist() == [70.0, 170.0, 270.0, 370.0, 470.0]
    assert len(set(built.table.paths)) == 5
    assert built.run_time == 500.0  # last burst start + max(busy, 0.5) x period


def test_file_per_process_phase_splits_the_volume():
    s = Scenario(
        "f", ranks=7, run_time=1000.0, noise=False, phases=(Phase("read", 0.5, 0.2, 1000.0, shared=False),)
    )
    rows = build(s, np.random.default_rng(0), "/scratch/x").table.table()
    assert rows["rank"].tolist() == list(range(7)) and rows["bytes_read"].sum() == 1000
    assert (rows["read_start"] >= 500).all() and (rows["read_end"] <= 700).all()


def test_metadata_burst_makes_the_requested_rate():
    s = Scenario(
        "m",
        ranks=4,
        run_time=100.0,
        noise=False,
        metadata=(MetadataLoad(0.1, 0.5, 800.0, repeat=2, spacing=10),),
    )
    rows = build(s, np.random.default_rng(0), "/scratch/x").table.table()
    # 800 req/s for 0.5 s = 400 requests = 200 opens (+ their closes) per burst, 4 files each.
    assert rows["opens"].sum() == 400 and len(rows) == 8
    assert sorted(set(rows["open_start"])) == [10.25, 20.25]


FORMATS = [
    Format("3.10", 3, 1),
    Format("3.21", 4, 2, big_endian=True, streams=3),
    Format("3.41", 4, 2, compression="bzip2"),
]


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f"{f.version}-{f.compression}")
@pytest.mark.parametrize("reason", INVALID_REASONS)
def test_each_broken_log_is_evicted_for_its_reason(reason, fmt):
    scenario = resolve(BY_NAME[f"invalid_{reason}"], np.random.default_rng(3))
    built = build(scenario, np.random.default_rng(3), "/scratch/x")
    job = make_job(1, 2, 1_550_000_000, built.run_time, built.nprocs, "/bin/app", fmt)
    for seed in range(3):  # every way a reason is made
        data = invalid_log(reason, darshan_log(job, built.table, fmt), fmt, np.random.default_rng(seed))
        with pytest.raises(LogError) as err:
            log = reader.read_log(data)
            reader.validate_job(log.job)
        assert err.value.reason == reason


@pytest.mark.parametrize("fmt, dxt_version", [(FORMATS[1], 1), (FORMATS[2], 2)], ids=["v1", "v2"])
@pytest.mark.parametrize("reason", ["truncated", "corrupt_stream"])
def test_broken_dxt_regions_of_either_version_are_evicted_for_their_reason(reason, fmt, dxt_version):
    """The truncated and corrupt-stream scenarios carry DXT: the region broken is then
    the POSIX or the DXT_POSIX one, in the DXT version the format writes."""
    scenario = resolve(BY_NAME[f"invalid_{reason}"], np.random.default_rng(3))
    assert scenario.dxt > 0
    built = build(scenario, np.random.default_rng(3), "/scratch/x")
    job = make_job(1, 2, 1_550_000_000, built.run_time, built.nprocs, "/bin/app", fmt)
    log = darshan_log(job, built.table, fmt, dxt=int(scenario.dxt))
    clean = write(log, fmt)
    dxt_at = reader.Header(clean).modules[F.DXT_POSIX]
    assert dxt_at[2] == dxt_version
    broken_dxt = 0
    for seed in range(8):
        data = invalid_log(reason, log, fmt, np.random.default_rng(seed))
        with pytest.raises(LogError) as err:
            reader.read_log(data)
        assert err.value.reason == reason
        off, n = dxt_at[:2]
        broken_dxt += data[:off] == clean[:off] and data[off : off + n] != clean[off : off + n]
    assert 0 < broken_dxt < 8


@pytest.mark.parametrize(
    "fmt",
    FORMATS + [Format("2.06", compression="gzip"), Format("2.05", compression="bzip2")],
    ids=lambda f: f"{f.version}-{f.compression}",
)
def test_valid_logs_read_back_with_the_run_time_of_the_truth(fmt):
    scenario = resolve(BY_NAME["write_on_end"], np.random.default_rng(5))
    built = build(scenario, np.random.default_rng(5), "/scratch/x")
    job = make_job(
        9, 10, 1_550_000_000, built.run_time, built.nprocs, "/bin/app -x", fmt, partial=not fmt.legacy
    )
    log = reader.read_log(write(darshan_log(job, built.table, fmt), fmt))
    assert log.job.run_time == pytest.approx(built.run_time)
    assert log.job.partial is (not fmt.legacy)
    rows = built.table.table()
    kept = rows if not fmt.legacy else rows[rows["module"] == F.POSIX]
    written = sum(
        int(m.canonical()["bytes_written"].sum())
        for m in log.modules.values()
        if m.module in (F.POSIX, F.STDIO)
    )
    assert written == int(kept["bytes_written"].sum())


def test_runs_of_a_group_scale_bytes_below_the_heaviest():
    scenario = resolve(BY_NAME["repeated_runs"], np.random.default_rng(2))
    template = Template(scenario, np.random.default_rng(2), "/scratch/x", CFG)
    fmt = Format("3.41", 4, 2)
    job = make_job(1, 2, 1_550_000_000, template.built.run_time, template.built.nprocs, "/a", fmt)

    def total(scale):
        data, _ = template.run(scale, fmt, job, np.random.default_rng(0))
        log = reader.read_log(data)
        return sum(
            int(m.canonical()["bytes_read"].sum() + m.canonical()["bytes_written"].sum())
            for m in log.modules.values()
        )

    rows = template.rows  # everything written, <STDOUT> included
    assert total(1.0) == int(rows["bytes_read"].sum() + rows["bytes_written"].sum())
    assert 0.79 * total(1.0) < total(0.8) < total(1.0)


def test_scenario_corpus_and_cli(tmp_path):
    names = ("write_on_end", "repeated_runs", "invalid_truncated", "metadata_high_spike")
    out = tmp_path / "corpus"
    result = CliRunner().invoke(
        main, ["synth", "scenarios", str(out), "--seeds", "2"] + [a for n in names for a in ("--only", n)]
    )
    assert result.exit_code == 0, result.output
    truth = [json.loads(line) for line in open(out / "truth.jsonl")]
    assert {t["scenario"] for t in truth} == set(names)
    assert all((out / t["file"]).is_file() for t in truth)
    repeated = [t for t in truth if t["scenario"] == "repeated_runs"]
    for group in {t["group"] for t in repeated}:
        runs = [t for t in repeated if t["group"] == group]
        assert len(runs) >= 3 and sum(t["heaviest"] for t in runs) == 1
    spikes = [t for t in truth if t["scenario"] == "metadata_high_spike"]
    assert all("metadata_high_spike" in t["families"]["metadata"]["must"] for t in spikes)
    broken = [t for t in truth if not t["valid"]]
    assert all(t["reason"] == "truncated" and t["families"] == {} and not t["heaviest"] for t in broken)
    # Same seed, same corpus.
    again = tmp_path / "again"
    write_scenarios(again, 2, scenarios=tuple(BY_NAME[n] for n in names))
    assert (again / "truth.jsonl").read_text() == (out / "truth.jsonl").read_text()


def test_catalog_covers_every_category_and_reason():
    from mosaic.analysis.labels import ALL_LABELS

    covered = set()
    for scenario in SCENARIOS:
        rng = np.random.default_rng(0)
        for _ in range(2):
            template = Template(resolve(scenario, rng), rng, "/scratch/x", CFG)
            if not scenario.invalid:
                for fam in template.families(1.0, False).values():
                    covered |= set(fam["must"])
    assert covered == set(ALL_LABELS)
    assert {s.invalid for s in SCENARIOS if s.invalid} == set(INVALID_REASONS)


def test_unknown_scenario_is_a_usage_error(tmp_path):
    result = CliRunner().invoke(main, ["synth", "scenarios", str(tmp_path), "--only", "nope"])
    assert result.exit_code == 2 and "nope" in result.output
    assert CliRunner().invoke(main, ["synth", "scenarios"]).exit_code == 2


def test_list_scenarios():
    result = CliRunner().invoke(main, ["synth", "scenarios", "--list"])
    assert result.exit_code == 0
    assert result.output.split() == [s.name for s in SCENARIOS]
