"""The held-out scenario table: rows draw their parameters in order, shapes draw the rest.

A log is a function of its seed through the order of the draws alone, so
these tests replay the same stream by hand and compare.
"""

import numpy as np
import pytest

from mosaic.config import Config
from mosaic.holdout.design import NOT_PERIODIC, Design, Records, Series, claimed
from mosaic.holdout.scenarios import (
    CHECKPOINT_DRAWS,
    SCENARIOS,
    SPEC_LIMIT_PROBES,
    Choice,
    Coin,
    Integers,
    LogUniform,
    Scenario,
    Uniform,
    UniformIn,
    checkpoints,
)

CONFIG = Config()


def echo(rng, config, **params):
    """A shape that returns what it was given, and the next draw of the stream."""
    return params, rng.random()


def test_a_row_draws_in_its_order_passes_fixed_values_and_leaves_the_stream_to_the_shape():
    row = Scenario(
        echo, dict(count=Integers(6, 25), layout="fpp", period=LogUniform(5, 7200), busy=Uniform(0.1, 0.2))
    )
    got, after = row(np.random.default_rng(7), CONFIG)
    ref = np.random.default_rng(7)
    count = int(ref.integers(6, 25))
    period = float(np.exp(ref.uniform(np.log(5), np.log(7200))))
    busy = ref.uniform(0.1, 0.2)
    assert got == dict(count=count, layout="fpp", period=period, busy=busy)
    assert after == ref.random()


def test_draws_replay_the_stream_by_hand():
    rng, ref = np.random.default_rng(3), np.random.default_rng(3)
    ranks = LogUniform(16, 1024, whole=True)(rng)
    assert type(ranks) is int and ranks == int(np.exp(ref.uniform(np.log(16), np.log(1024))))
    assert Choice(("shared", "per_rank"))(rng) == str(ref.choice(["shared", "per_rank"]))
    assert Coin(0.8e8, 1.3e8)(rng) == (0.8e8 if ref.random() < 0.5 else 1.3e8)
    ranges = ((0.06, 0.18), (0.3, 0.7), (0.74, 0.8))
    assert UniformIn(ranges)(rng) == ref.uniform(*ranges[ref.integers(3)])
    # rng.integers excludes its high end: [3, 4) is always 3.
    assert {Integers(3, 4)(rng) for _ in range(20)} == {3}


def test_checkpoints_draw_only_what_the_row_leaves_out():
    given = dict(ranks=3, count=6, period=100.0, busy=0.5, layout="shared", size=1e9)
    design = checkpoints(np.random.default_rng(0), CONFIG, **given)
    assert design.params == given and design.nprocs == 3
    (write,) = design.write.series
    assert (write.count, write.total_bytes, design.write.claim) == (6, 6e9, True)
    assert design.read is NOT_PERIODIC
    # A row fixing two of the six: those stay, the other four are drawn within their ranges.
    design = SCENARIOS["fpp_thousands"](np.random.default_rng(0), CONFIG)
    p = design.params
    assert list(p) == list(CHECKPOINT_DRAWS) and p["layout"] == "fpp"
    assert 2048 <= p["ranks"] <= 4096 and 5 <= p["count"] <= 7 and 60 <= p["period"] <= 3600
    assert 0.05 <= p["busy"] <= 0.9 and 2e8 <= p["size"] <= 5e10


@pytest.mark.parametrize(
    "counts, others, expected",
    [([10], 0, True), ([4], 0, None), ([10], 2, None), ([10, 10], 0, True)],
)
def test_claimed_counts_each_series_occurrences(counts, others, expected):
    series = [Series(60.0, 0.2, 1e9, n) for n in counts]
    periodicity = claimed(CONFIG, *series, other_ops=others)
    assert periodicity.claim is expected and periodicity.series == series


def test_a_design_claims_no_period_unless_told():
    design = Design(10.0, 1, Records(), {})
    assert design.read.claim is False and design.write.claim is False and design.posix_only


def test_spec_limit_probes_are_the_rows_flagged_so():
    assert SPEC_LIMIT_PROBES == (
        "poisson_equal_bytes",
        "serialized_rank_writes",
        "ckpt_two_files",
        "hourly_daily_one_direction",
    )
