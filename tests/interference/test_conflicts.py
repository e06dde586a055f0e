"""SPEC 3.11.3: the victim x aggressor matrix, fitted jointly."""

import numpy as np
import pytest

from mosaic.config import Config
from mosaic.interference import conflicts

CONFIG = Config()


def _designed(seed=0, n=400):
    """Victims read_on_start (some also write_periodic); others carry write_periodic (with
    its period class, always together), metadata_heavy, or both. Designed: periodic
    writers add 3e-8 of slowdown per byte/s to read_on_start jobs; metadata_heavy adds 0."""
    rng = np.random.default_rng(seed)
    others = [["write_periodic", "write_period_minute"], ["metadata_heavy"], ["write_periodic",
              "write_period_minute", "metadata_heavy"]] * 20  # fmt: skip
    victim_labels = [["read_on_start"] for _ in range(n)]
    run, other, rate = [], [], []
    for i in range(n):
        for j in rng.choice(len(others), size=2, replace=False):
            run.append(i)
            other.append(j)
            rate.append(rng.uniform(0, 3e7))
    run, other, rate = np.array(run), np.array(other), np.array(rate)
    periodic = np.array(["write_periodic" in others[j] for j in other])
    extra = np.bincount(run, weights=rate * periodic * 3e-8, minlength=n)
    slowdown = 1 + extra + 0.05 * rng.standard_normal(n)
    return slowdown, victim_labels, run, other, rate, others


def _pairs(matrix):
    return {(p["victim"], p["aggressor"]): p for p in matrix["pairs"]}


def test_designed_pair_found_zero_pair_not_conflicting_confounded_pair_null():
    matrix = conflicts.fit(*_designed(), CONFIG)
    pairs = _pairs(matrix)
    assert matrix["intercept"] == pytest.approx(1.0, abs=0.02)
    # write_periodic and write_period_minute always come together: neither is separable
    for aggressor in ("write_periodic", "write_period_minute"):
        assert pairs[("read_on_start", aggressor)]["coef"] is None
        assert "separable" in pairs[("read_on_start", aggressor)]["reason"]
    zero = pairs[("read_on_start", "metadata_heavy")]
    assert zero["conflicting"] is False and zero["lo"] < 0 < zero["hi"]


def test_separable_designed_pair_is_conflicting_with_its_size_inside_the_interval():
    slowdown, victims, run, other, rate, others = _designed(seed=1)
    others = [[label for label in labels if label != "write_period_minute"] for labels in others]
    pairs = _pairs(conflicts.fit(slowdown, victims, run, other, rate, others, CONFIG))
    hit = pairs[("read_on_start", "write_periodic")]
    assert hit["conflicting"] is True and hit["lo"] <= 3e-8 <= hit["hi"]
    assert pairs[("read_on_start", "metadata_heavy")]["conflicting"] is False
    words = conflicts.sentence({"pairs": list(pairs.values())})
    assert words.startswith("write_periodic jobs slow read_on_start jobs: +3.0")
    assert "per 100 MB/s they move" in words


def test_a_pair_without_evidence_is_null_never_zero():
    slowdown = np.array([1.0, 1.2, 1.1, 1.5])
    victims = [["read_on_start"], ["read_on_start"], ["read_on_start"], ["write_on_end"]]
    # write_on_end met an aggressor in one run only: fewer than contention_pair_min_runs = 3
    run, other, rate = np.array([0, 1, 2, 3]), np.array([0, 0, 0, 0]), np.array([1e6, 2e6, 1.5e6, 5e6])
    pairs = _pairs(conflicts.fit(slowdown, victims, run, other, rate, [["metadata_heavy"]], CONFIG))
    lonely = pairs[("write_on_end", "metadata_heavy")]
    assert lonely["coef"] is None and lonely["conflicting"] is None and lonely["runs"] == 1
    assert pairs[("read_on_start", "metadata_heavy")]["runs"] == 3


def test_no_labels_gives_a_reason():
    out = conflicts.fit(np.ones(2), [[], []], np.zeros(0, int), np.zeros(0, int), np.zeros(0), [], CONFIG)
    assert out["pairs"] == [] and "no victim" in out["reason"]
