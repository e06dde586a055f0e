"""SPEC 3.11 end to end on a designed store: labels as MOSAIC gives them (partitions of
temporality, periodic refinements), one designed conflicting pair, scored from the truth's
side (mosaic.interference.evaluate)."""

import numpy as np
import pytest

from mosaic.config import Config
from mosaic.corpus.store import Store
from mosaic.interference.analyse import analyse
from mosaic.interference.evaluate import score, stored
from mosaic_testing.contention_tables import fill

CONFIG = Config(contention_min_runs=20)
VICTIM = "1:/bin/reader"
REFINED = ["write_periodic_minute", "write_periodic_low_busy_time"]  # always beside write_periodic
AGGRESSORS = {  # group -> labels; only write_periodic slows (designed 2e-8 per byte/s)
    "2:/bin/ckpt": ["read_insignificant", "write_periodic", *REFINED, "write_after_start_before_end"],
    "3:/bin/ckpt2": ["read_insignificant", "write_periodic", *REFINED, "write_on_end"],
    "4:/bin/post": ["read_steady", "write_on_end", "metadata_insignificant_load"],
    "5:/bin/scan": ["read_steady", "write_insignificant", "metadata_high_spike"],
    "6:/bin/mixed": [
        "read_steady",
        "write_periodic",
        *REFINED,
        "write_on_end",
        "metadata_insignificant_load",
    ],
}  # five label sets over five fitted aggressor labels: each label's effect is separable
EFFECT = 2e-8


def _store(path, seed=0, victims=300, per_group=30):
    rng = np.random.default_rng(seed)
    performance, load, overlaps, jobs, truth = [], [], [], [], []
    others = []
    run = 1000
    for key, labels in AGGRESSORS.items():
        for _ in range(per_group):
            periodic = "write_periodic" in labels
            performance.append((run, key, 1e9, 10.0, 10.0, "N:1" if periodic else "N:N", None))
            load.append((run, "/scratch", 0.0, 0.0, 0.0, 0, 10.0))
            jobs.append((run, f"a{run}", str(run), key, labels))
            others.append((run, periodic))
            run += 1
    for i in range(victims):
        picked = rng.choice(len(others), size=2, replace=False) if i % 4 else []  # a quarter met nobody
        rates = rng.uniform(5e6, 5e7, size=len(picked))
        slowing = sum(r for k, r in zip(picked, rates) if others[k][1])
        slowdown = (1 + EFFECT * slowing) * np.exp(0.03 * rng.standard_normal())
        performance.append((i, VICTIM, 1e9, 10.0 * slowdown, 10.0, "N:N", None))
        load.append((i, "/scratch", 0.0, float(rates.sum()), 0.0, len(picked), 10.0))
        total = float(rates.sum()) or 1.0
        for k, rate in zip(picked, rates):
            overlaps.append((i, others[k][0], "/scratch", rate * 10.0, rate / total))
        jobs.append(
            (
                i,
                f"v{i}",
                str(i),
                VICTIM,
                ["read_on_start", "write_insignificant", "metadata_insignificant_load"],
            )
        )
        by = [
            {"job_id": str(others[k][0]), "share": r / total} for k, r in zip(picked, rates) if others[k][1]
        ]
        contention = {"slowed": slowdown > 1.0, "slowdown": float(slowdown), "by": by, "demand_bps": 1e8,
                      "got_bps": 1e8 / slowdown, "group_sensitivity": "sensitive", "effect": 0.8}  # fmt: skip
        truth.append({"file": f"v{i}", "group": VICTIM, "contention": contention})
    with Store(path) as store:
        fill(store, performance, load, overlaps, jobs)
        summary = analyse(store, CONFIG)
        with store._snapshot() as db:
            labels, runs = stored(db)
            pairs = {
                (r[0], r[1]): r
                for r in db.execute(
                    "SELECT victim, aggressor, coef, lo, hi, conflicting FROM label_conflicts"
                )
            }
    return summary, labels, runs, pairs, truth


def test_the_designed_pair_conflicts_and_the_others_do_not(tmp_path):
    summary, labels, runs, pairs, truth = _store(tmp_path / "s.sqlite")
    assert labels[VICTIM] == "sensitive"
    hit = pairs[("read_on_start", "write_periodic")]
    assert hit[5] == 1 and hit[3] <= EFFECT <= hit[4]
    for aggressor in ("write_after_start_before_end", "write_on_end", "read_steady", "metadata_high_spike"):
        assert pairs[("read_on_start", aggressor)][5] == 0, aggressor  # designed 0: not conflicting
    assert not any(a in REFINED or a.endswith("_insignificant") for _, a in pairs)  # references left out
    assert summary["sentence"].startswith("write_periodic jobs slow read_on_start jobs: +2.0")
    scored = score(truth, labels, runs)
    assert scored["slowed_runs"] > 50
    assert scored["slowed_flagged_share"] >= 0.9
    # adversarial here: half the others move bytes that slow nobody, and the cause is the run
    # with the largest share of bytes (measured 0.86 on this seed); on a bandwidth-sharing
    # truth every byte slows
    assert scored["named_cause_share"] >= 0.8
    # victims that met nobody are never slow
    assert not any(runs[f"v{i}"][0] for i in range(0, 300, 4))


@pytest.mark.parametrize("seed", [1, 2])
def test_more_seeds(tmp_path, seed):
    _, _, _, pairs, _ = _store(tmp_path / "s.sqlite", seed=seed)
    assert pairs[("read_on_start", "write_periodic")][5] == 1
    assert all(
        pairs[("read_on_start", a)][5] == 0 for a in ("write_on_end", "read_steady", "metadata_high_spike")
    )
