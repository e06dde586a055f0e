"""HEATMAP bursts as mean shift's second source of operations (SPEC 3.5): edges of the rule."""

import numpy as np
import pytest

from mosaic.analysis import bursts as heatmap_bursts
from mosaic.analysis.categorize import HEATMAP, OPERATIONS, analyze
from mosaic.config import Config
from mosaic.trace import WRITE, HeatmapSignal, Trace
from mosaic_testing.traces import make_trace

CFG = Config()


def bursts(values, bin_seconds=1.0):
    return heatmap_bursts.heatmap_bursts(
        np.asarray(values, dtype=float), bin_seconds, minor_rate_fraction=CFG.minor_rate_fraction
    )


def join_split(found):
    return heatmap_bursts.join_split(found, 1.0, meanshift_bandwidth=CFG.meanshift_bandwidth)


def appended(write_bins: np.ndarray, bin_seconds: float) -> Trace:
    """Four ranks append to one shared file over the whole run: one record each, spanning it,
    so the operations merge into one; only the HEATMAP says when the bytes moved."""
    run_time = len(write_bins) * bin_seconds
    share = float(write_bins.sum()) / 4
    heatmap = HeatmapSignal(bin_seconds=bin_seconds, read=np.zeros(len(write_bins)), write=write_bins)
    return make_trace([(0.0, run_time, share, 1, WRITE)] * 4, run_time=run_time, heatmap=heatmap)


def checkpoint_bins(count: int, every: int, length: int, lead: int = 3, tail: int = 3) -> np.ndarray:
    """``count`` bursts of ``length`` full bins (1 GB each), one every ``every`` bins."""
    bins = np.zeros(lead + count * every + tail)
    for k in range(count):
        bins[lead + k * every : lead + k * every + length] = 1e9
    return bins


def test_maximal_runs_of_non_empty_bins():
    found = bursts([0, 5, 5, 0, 0, 7, 0, 2, 2, 2], bin_seconds=2.0)
    assert found.starts.tolist() == [2.0, 10.0, 14.0]
    assert found.ends.tolist() == [6.0, 12.0, 20.0]  # the last touches the heatmap's end
    assert found.bytes.tolist() == [10.0, 7.0, 6.0]
    assert found.minor.tolist() == [False, False, False]


def test_a_burst_from_the_first_bin_and_single_bin_bursts():
    found = bursts([3, 0, 3, 0, 3, 0, 3])
    assert found.starts.tolist() == [0.0, 2.0, 4.0, 6.0]
    assert found.ends.tolist() == [1.0, 3.0, 5.0, 7.0]


def test_no_empty_bin_is_one_burst_and_empty_heatmap_none():
    found = bursts([1, 2, 3, 4])
    assert (found.starts.tolist(), found.ends.tolist(), found.bytes.tolist()) == ([0.0], [4.0], [10.0])
    assert len(bursts([0, 0, 0])) == 0 and len(bursts([])) == 0


def test_slow_bursts_are_minor():
    """Median rate 1e9 B/s; 1 % of it is 1e7 B/s: 9.9e6 B in one 1 s bin is minor, 1e7 is not."""
    found = bursts([1e9, 0, 9.9e6, 0, 1e7, 0, 1e9, 0, 1e9])
    assert found.minor.tolist() == [False, True, False, False, False]


def test_appended_checkpoints_are_periodic_from_the_heatmap():
    """Five 2 s checkpoints every 10 s, 1 s bins: segments of 10 s, busy 2/10."""
    analysis = analyze(appended(checkpoint_bins(5, every=10, length=2), 1.0), CFG).write
    assert analysis.meanshift["source"] == HEATMAP
    (operation,) = analysis.meanshift["operations"]
    assert (operation["period"], operation["occurrences"]) == (10.0, 5)
    assert operation["bytes_per_occurrence"] == 2e9
    assert operation["busy_fraction"] == pytest.approx(0.2)
    assert "write_periodic_second" in analysis.labels and "write_periodic_low_busy_time" in analysis.labels


def test_three_bursts_are_enough_and_two_are_not():
    """min_periodic_segments = 3 (SPEC 3.4), whichever source the operations came from."""
    three = analyze(appended(checkpoint_bins(3, every=10, length=2), 1.0), CFG).write
    assert three.meanshift["source"] == HEATMAP and three.verdict["periodic"]
    two = analyze(appended(checkpoint_bins(2, every=10, length=2), 1.0), CFG).write
    assert two.meanshift["source"] == OPERATIONS and not two.meanshift["periodic"]


def test_bursts_faster_than_the_minimum_period_are_no_period():
    """Single-bin bursts every 2 bins: 0.8 s apart with 0.4 s bins (under min_period_seconds
    = 1 s: request cadence), 1.2 s apart with 0.6 s bins (a period)."""
    bins = checkpoint_bins(20, every=2, length=1)
    fast = analyze(appended(bins, 0.4), CFG).write
    assert fast.meanshift["source"] == OPERATIONS and not fast.verdict["periodic"]
    slow = analyze(appended(bins, 0.6), CFG).write
    assert slow.meanshift["source"] == HEATMAP
    assert slow.meanshift["operations"][0]["period"] == pytest.approx(1.2)


def test_a_heatmap_without_empty_bins_gives_no_period():
    bins = np.tile([1e9, 2e8], 20)  # busy every bin, volume alternating
    analysis = analyze(appended(bins, 1.0), CFG).write
    assert analysis.meanshift["source"] == OPERATIONS and len(analysis.bursts) == 1


def test_random_on_off_traffic_gains_no_false_period():
    """200 heatmaps of Poisson on/off traffic (exponential on and off times, 3-8 bins mean):
    no period from the bursts, as none from the operations before SPEC 3.5."""
    rng = np.random.default_rng(2026)
    false = 0
    for _ in range(200):
        on, off = rng.uniform(3, 8, size=2)
        bins = []
        while len(bins) < 200:
            bins += [0.0] * (1 + int(rng.exponential(off))) + [1e9] * (1 + int(rng.exponential(on)))
        analysis = analyze(appended(np.array(bins[:200]), 1.0), CFG).write
        false += bool(analysis.verdict["periodic"])
    assert false == 0


# --- one occurrence split by one empty bin (SPEC 3.5) ---


def split_epochs(gap: int = 1, first: float = 1e9, second: float = 1e9, epochs: int = 5) -> np.ndarray:
    """``epochs`` reads of 2 GB (four 0.5 GB bins) every 10 bins; the first one instead reads
    ``first`` in two bins, then ``second`` in two bins after ``gap`` empty bins."""
    bins = np.zeros(3 + 10 * epochs + 3)
    bins[3:5], bins[5 + gap : 7 + gap] = first / 2, second / 2
    for k in range(1, epochs):
        bins[3 + 10 * k : 7 + 10 * k] = 0.5e9
    return bins


def test_two_bursts_one_empty_bin_apart_adding_up_to_the_volume_join():
    found = join_split(bursts(split_epochs()))
    assert found.starts.tolist() == [3.0, 13.0, 23.0, 33.0, 43.0]
    assert found.ends.tolist() == [8.0, 17.0, 27.0, 37.0, 47.0]
    assert found.bytes.tolist() == [2e9] * 5
    assert found.joined.tolist() == [True, False, False, False, False]


@pytest.mark.parametrize(
    "gap, first, second",
    [
        (2, 1e9, 1e9),  # two empty bins apart
        (1, 1.7e9, 0.3e9),  # the first part alone is comparable (1.7 / 2 > 1 / 1.25)
        (1, 1.26e9, 1.26e9),  # 2.52 GB together: over 1.25 x the 2 GB volume
    ],
)
def test_no_join_beyond_one_bin_or_volume(gap, first, second):
    assert join_split(bursts(split_epochs(gap, first, second))) is None


def test_the_volume_edges_of_a_join():
    """Parts that add up to just within one bandwidth (x 1.25) of the median join; a part just
    under the volume / 1.25 (1.6 GB) is a part, one just over it an occurrence of its own."""
    inside = split_epochs(first=1.24e9, second=1.24e9)  # 2.48 GB < 2.5 GB
    assert join_split(bursts(inside)).joined[0]
    part = split_epochs(first=1.59e9, second=0.4e9)  # 1.59 < 1.6 = 2 / 1.25
    assert join_split(bursts(part)).joined[0]
    whole = split_epochs(first=1.61e9, second=0.4e9)
    assert join_split(bursts(whole)) is None


def test_a_burst_joins_one_neighbour_at_most():
    """Three 1 GB bursts one empty bin apart before 2 GB epochs: the first two join."""
    bins = split_epochs()
    bins[9:11] = 0.5e9  # a third part, one empty bin after the second
    found = join_split(bursts(bins))
    assert found.bytes.tolist()[:2] == [2e9, 1e9] and found.joined.tolist()[:2] == [True, False]


def test_an_epoch_split_by_one_empty_bin_is_periodic():
    """Five 2 GB epochs every 10 s, the first split 1 + 1 GB: 4 of 6 bursts alike (67 %) without
    the join, five occurrences with it; two empty bins keep the split (not periodic)."""
    joined = analyze(appended(split_epochs(), 1.0), CFG).write
    assert joined.meanshift["source"] == HEATMAP and joined.bursts.joined[0]
    (operation,) = joined.meanshift["operations"]
    assert (operation["occurrences"], operation["period"]) == (5, 10.0)
    apart = analyze(appended(split_epochs(gap=2), 1.0), CFG).write
    assert apart.meanshift["source"] == OPERATIONS and not apart.verdict["periodic"]
    assert not apart.bursts.joined.any()


def test_a_join_that_makes_no_occurrence_is_dropped():
    """Two 1 GB bursts one empty bin apart among single 2 GB bursts at random times: the
    joined burst has the volume, but nothing recurs; the bursts stay as the bins give them."""
    bins = np.zeros(120)
    bins[[3, 4, 6, 7]] = 0.5e9
    for at in (20, 31, 57, 62, 90, 113):
        bins[at] = 2e9
    analysis = analyze(appended(bins, 1.0), CFG).write
    assert not analysis.verdict["periodic"] and not analysis.bursts.joined.any()


def test_edge_bins_count_by_their_fill_and_inner_bins_whole():
    """Bins 50 200 200 100 | 300 | 20 200 (0.5 s): the first burst's median bin is 150, its
    edges fill 1/3 and 2/3: 2 + 1 = 3 bins; a one-bin burst is one bin (the bin bounds it);
    20 / 110 and min(200 / 110, 1): 1.18 bins (SPEC 3.5)."""
    found = bursts([0, 50, 200, 200, 100, 0, 300, 0, 20, 200], bin_seconds=0.5)
    assert found.busy.tolist() == pytest.approx([1.5, 0.5, 0.5 * (20 / 110 + 1)])
    assert (found.ends - found.starts).tolist() == pytest.approx([2.0, 0.5, 1.0])


def test_a_joined_occurrence_is_not_busy_in_the_empty_bin_between():
    """200 200 | empty | 200 200 joined (the 800 of the bursts around): 4 bins busy, not 5."""
    values = [400, 400, 0, 0, 200, 200, 0, 200, 200, 0, 0, 400, 400, 0, 0, 400, 400]
    joined = join_split(bursts(values))
    assert joined.joined.tolist() == [False, True, False, False]
    assert joined.busy.tolist() == pytest.approx([2.0, 4.0, 2.0, 2.0])
    assert (joined.ends - joined.starts).tolist() == pytest.approx([2.0, 5.0, 2.0, 2.0])


def periodic(period, starts):
    operation = {"period": period, "period_resolution": 0.0}
    return {"operations": [operation], "occurrences": [{"starts": np.array(starts, float)}]}


def test_a_period_below_the_bins_spans_its_intervals():
    """Starts 0, 7.2, 14.4, 20.8 in 0.8 s bins (median 7.2): 3 intervals of one period each,
    20.8 s: 6.93 +- 0.27 s."""
    (operation,) = heatmap_bursts.sub_bin_periods(periodic(7.2, [0, 7.2, 14.4, 20.8]), 0.8)["operations"]
    assert operation["period"] == pytest.approx(20.8 / 3)
    assert operation["period_resolution"] == pytest.approx(0.8 / 3)


def test_a_missed_cycle_spans_two_periods_and_a_burst_of_the_same_cycle_none():
    """Intervals 8, 16 (a cycle missed) and 4 (half a period: the same cycle) with period 8:
    1 + 2 + 0 periods over 24 s."""
    (operation,) = heatmap_bursts.sub_bin_periods(periodic(8.0, [0, 8, 24, 28]), 0.8)["operations"]
    assert operation["period"] == pytest.approx(8.0)
    assert operation["period_resolution"] == pytest.approx(0.8 / 3)


@pytest.mark.parametrize("bins, source", [(16, HEATMAP), (15, OPERATIONS)])
def test_the_heatmap_places_the_quarters_when_a_quarter_holds_four_bins(bins, source):
    """Appends in the last bin only: 16 bins of 1 s make quarters of 4 bins (heatmap_quarter_bins):
    all bytes in q3, on_end; 15 make quarters of 3.75 bins, too coarse (a run shorter than a bin
    would read as even): the records spread them evenly (SPEC 3.6)."""
    write_bins = np.zeros(bins)
    write_bins[-1] = 2e8
    write = analyze(appended(write_bins, 1.0), CFG).write
    assert write.chunks_source == source
    assert write.chunks.sum() == pytest.approx(2e8)
    assert ("write_on_end" in write.labels) is (source == HEATMAP)


def test_the_time_spent_scales_every_burst_alike():
    """Bins of 0.8 + 0.8 + 1.6 s against 1.6 s spent: half of each; the bins' 3.2 s kept."""
    busy, bound = heatmap_bursts.spent_bound(np.array([0.8, 0.8, 1.6]), 1.6)
    assert busy.tolist() == pytest.approx([0.4, 0.4, 0.8])
    assert bound == pytest.approx((3.2, 1.6))


@pytest.mark.parametrize("spent", [3.2, 4.0])
def test_a_time_spent_of_the_bins_or_more_bounds_nothing(spent):
    busy, bound = heatmap_bursts.spent_bound(np.array([0.8, 0.8, 1.6]), spent)
    assert busy.tolist() == [0.8, 0.8, 1.6] and bound is None


@pytest.mark.parametrize(
    "busy, expected",
    [
        ([0.8, 1.6, 1.6], True),
        ([1.6, 1.6 + 1e-9, 1.7], False),
        ([0.8, 0.8, 2.4, 3.0], True),
        ([0.8, 0.8, 3.0, 3.0], False),
        ([], False),
    ],
)
def test_bins_are_coarse_up_to_a_median_of_two_bins(busy, expected):
    """0.8 s bins: a median burst of 1.6 s (two bins) is coarse, a hair more is not; an even
    count takes the mean of the middle two (0.8 and 2.4: 1.6 s, coarse; 0.8 and 3.0: 1.9 s, not)."""
    assert heatmap_bursts.coarse(np.array(busy), 0.8) is expected


def test_heatmap_bursts_bound_only_coarse_bursts():
    """One-bin bursts with 0.1 s spent share it (0.05 s each); three-bin bursts keep their bins."""
    bins = np.array([5.0, 0, 0, 5.0, 0, 0])
    short = heatmap_bursts.heatmap_bursts(bins, 0.8, minor_rate_fraction=0.01, spent=0.1)
    assert short.busy.tolist() == pytest.approx([0.05, 0.05]) and short.bound == pytest.approx((1.6, 0.1))
    long = np.array([5.0, 5.0, 5.0, 0, 5.0, 5.0, 5.0, 0])
    wide = heatmap_bursts.heatmap_bursts(long, 0.8, minor_rate_fraction=0.01, spent=0.1)
    assert wide.busy.tolist() == pytest.approx([2.4, 2.4]) and wide.bound is None
