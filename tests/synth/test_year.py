"""The year profile: proportions of the paper on ~2,000 logs, groups, archives, readability."""

import json
import tarfile
from collections import Counter, defaultdict

import numpy as np
import pytest
from click.testing import CliRunner

from mosaic.cli import main
from mosaic.darshan import reader
from mosaic.errors import LogError
from mosaic.synth.year import PROFILES, RUNS_PER_GROUP, generate_year, group_runs, next_profile


@pytest.fixture(scope="module")
def year(tmp_path_factory):
    out = tmp_path_factory.mktemp("year")
    summary = generate_year(out, 2000, seed=7, archive_share=0.1)
    truth = [json.loads(line) for line in open(out / "truth.jsonl")]
    return out, summary, truth


def test_counts_and_invalid_share(year):
    out, summary, truth = year
    assert summary.logs == len(truth) == 2000
    invalid = [t for t in truth if not t["valid"]]
    assert 0.29 <= len(invalid) / 2000 <= 0.35
    reasons = Counter(t["reason"] for t in invalid)
    assert set(reasons) == {
        "unreadable",
        "truncated",
        "corrupt_stream",
        "unsupported_version",
        "bad_job",
        "no_io_modules",
    }
    assert all(n >= 10 for n in reasons.values())


def test_groups_are_few_heavy_tailed_with_one_heaviest(year):
    _, summary, truth = year
    valid = [t for t in truth if t["valid"]]
    runs = defaultdict(list)
    for t in valid:
        runs[t["group"]].append(t)
    # 8 % on a large year; 2,000 logs cap a group at 80 runs (MAX_GROUP_SHARE), fewer
    # than the steady readers' mean (391), so groups are a little more numerous.
    assert 0.05 <= len(runs) / len(valid) <= 0.13
    sizes = sorted((len(r) for r in runs.values()), reverse=True)
    assert sizes[0] >= 10 * sizes[len(sizes) // 2]  # heavy tail
    for group in runs.values():
        assert sum(t["heaviest"] for t in group) == 1
        heaviest = next(t for t in group if t["heaviest"])
        assert heaviest["params"]["scale"] == 1.0
        assert all(t["params"]["scale"] < 1.0 for t in group if not t["heaviest"])

    def labels(t):
        return sorted(label for fam in t["families"].values() for label in fam["must"])

    others = [
        (t, next(h for h in group if h["heaviest"]))
        for group in runs.values()
        for t in group
        if not t["heaviest"]
    ]
    same = sum(labels(t) == labels(h) for t, h in others) / len(others)
    assert 0.8 <= same < 1.0  # the paper's hypothesis holds for most runs, not all


def test_category_proportions_like_the_paper(year):
    _, _, truth = year
    apps = [t for t in truth if t["valid"] and t["heaviest"]]

    def share(label, family):
        return sum(label in t["families"][family]["must"] for t in apps) / len(apps)

    assert 0.75 <= share("read_insignificant", "read_temporality") <= 0.95
    assert 0.75 <= share("write_insignificant", "write_temporality") <= 0.95
    assert share("write_periodic", "write_periodicity") <= 0.1
    runs = [t for t in truth if t["valid"]]
    assert 0 < sum("write_periodic" in t["families"]["write_periodicity"]["must"] for t in runs)
    assert share("write_steady", "write_temporality") > 0
    assert share("write_on_end", "write_temporality") > 0
    spikes = sum(
        bool({"metadata_high_spike", "metadata_multiple_spikes"} & set(t["families"]["metadata"]["must"]))
        for t in apps
    ) / len(apps)
    assert spikes >= 0.1


def test_rows_are_dealt_in_proportion_to_their_single_run_share():
    single, chosen, order = np.array([0.75, 0.25]), np.zeros(2), []
    for _ in range(8):
        row = next_profile(chosen, single)  # ties go to the first row
        chosen[row] += 1
        order.append(row)
    assert order == [0, 0, 1, 0, 0, 0, 1, 0] and chosen.tolist() == [6, 2]


def test_runs_pay_what_the_row_owes_within_the_cap():
    rng = np.random.default_rng(0)
    assert {group_runs(rng, owed, 100) for owed in (-50.0, 0.0, 1.0)} == {1}  # runs once
    assert group_runs(rng, 10_000.0, 7) == 7
    draws = [group_runs(rng, 41.0, 10_000) for _ in range(4000)]
    assert abs(np.mean(draws) - 41) < 1.0 and max(draws) > 2 * 41  # unbiased, spread out


def test_profile_rows_add_up_to_the_paper_tables():
    single = {row[2].name: row[0] for row in PROFILES}
    every = {row[2].name: row[1] for row in PROFILES}
    assert sum(single.values()) == pytest.approx(100) and sum(every.values()) == pytest.approx(100)
    steady_readers = ("year_read_write_steady", "year_read_write_steady_quiet", "year_read_steady")
    assert sum(every[n] for n in steady_readers) == pytest.approx(30)  # Table III, all runs
    assert sum(single[n] for n in steady_readers) == pytest.approx(2)  # Table III, single run
    assert every["year_periodic_writer"] == 8 and single["year_periodic_writer"] == 2  # Table II
    assert RUNS_PER_GROUP * every["year_read_write_steady"] / single[
        "year_read_write_steady"
    ] == pytest.approx(390.625)


def test_format_mix_and_sizes(year):
    out, _, truth = year
    versions = Counter(t["params"]["format"]["version"] for t in truth)
    assert versions["3.10"] / 2000 > 0.6
    assert versions["2.05"] + versions["2.06"] > 0 and versions["3.41"] + versions["3.21"] > 0
    sizes = sorted((out / t["file"]).stat().st_size for t in truth if ".tar.gz/" not in t["file"])
    assert sizes[len(sizes) // 2] < 8_000  # most logs a few KB


def test_archived_days_and_logs_read_as_the_truth_says(year):
    out, _, truth = year
    archived = [t for t in truth if ".tar.gz/" in t["file"]]
    assert archived
    archive, member = archived[0]["file"].split(".tar.gz/")
    with tarfile.open(out / f"{archive}.tar.gz") as tar:
        data = tar.extractfile(member).read()
    assert data[:2] in (b"3.", b"2.", b"\x1f\x8b", b"BZ") or not archived[0]["valid"]
    checked = 0
    for t in truth[:300]:
        if ".tar.gz/" in t["file"]:
            continue
        data = (out / t["file"]).read_bytes()
        try:
            log = reader.read_log(data)
            reader.validate_job(log.job)
            got = None
        except LogError as err:
            got = err.reason
        if got is None and not any(m in log.modules for m in (1, 9)) and log.dxt_posix is None:
            got = "no_io_modules"
        assert got == t["reason"], t["file"]
        checked += 1
    assert checked > 200


def test_same_seed_same_year(tmp_path):
    for name in ("a", "b"):
        result = CliRunner().invoke(
            main,
            ["synth", "year", str(tmp_path / name), "--count", "60", "--seed", "3", "--archive-share", "0"],
        )
        assert result.exit_code == 0, result.output
    first, second = ((tmp_path / name / "truth.jsonl").read_text() for name in ("a", "b"))
    assert first == second
