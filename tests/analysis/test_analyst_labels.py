"""Labels an HPC I/O analyst checked against the raw records of real logs (SPEC 3.5, 3.7).

Seeks move a file offset in the client and reach no metadata server: they
count as metadata requests only with ``metadata_seeks`` (the paper's rule).
DLIO readers whose per-file records span every epoch read in bursts that only
the HEATMAP shows: mean shift segments those bursts when the operations show
no period.
"""

import pytest

from mosaic.analysis.categorize import analyze
from mosaic.config import Config
from mosaic.logfile import categorize_file
from mosaic.trace import read_trace
from mosaic_testing.logs import REAL_LOGS
from mosaic_testing.parser_text import RUNTIME_LOGS

DLIO = REAL_LOGS / "dlio_logs"
DLIO_B = ("2111031", "2111032", "2111157", "2111220", "2111375", "2111438", "2111501", "2111564")
# The other large DLIO readers: one burst per epoch (periodic), two equal bursts per epoch
# (2110720: periodic, each burst's own 8 s pace), or a first epoch split in two bursts by one
# empty bin (periodic once joined: five epochs).
DLIO_A_SPLIT = ("2110489", "2110532", "2110533")
DLIO_A_PERIODIC = ("2110483", "2110487", "2110488", "2110531", "2110720") + DLIO_A_SPLIT
PAPER = Config(metadata_seeks=True)
THREE = ["metadata_high_spike", "metadata_multiple_spikes", "metadata_high_density"]


def dlio(job: str):
    found = sorted(DLIO.glob(f"*{job}_*.darshan"))
    if not found:
        pytest.skip("tests/data/darshan-logs not present")
    return found[0]


def shared(name: str):
    found = sorted(REAL_LOGS.rglob(name))
    if not found:
        pytest.skip("tests/data/darshan-logs not present")
    return found[0]


def metadata_labels(result: dict) -> list[str]:
    return [c for c in result["categories"] if c.startswith("metadata_")]


def periodic_labels(result: dict, direction: str) -> list[str]:
    return [c for c in result["categories"] if c.startswith(f"{direction}_periodic")]


@pytest.mark.parametrize("job", DLIO_B + DLIO_A_PERIODIC)
def test_dlio_seeks_are_no_metadata_load(job):
    """18k-46k seeks against 60-95 opens: three metadata labels with seeks, none without."""
    path = dlio(job)
    assert metadata_labels(categorize_file(path, Config())) == ["metadata_insignificant_load"]
    assert metadata_labels(categorize_file(path, PAPER)) == THREE


@pytest.mark.parametrize("job", DLIO_B)
def test_dlio_b_epochs_are_periodic_from_the_heatmap(job):
    """4 s read bursts every ~8 s between empty heatmap bins; busy 0.49-0.61: no busy label."""
    result = categorize_file(dlio(job), Config())
    assert periodic_labels(result, "read") == ["read_periodic", "read_periodic_second"]
    meanshift = result["read"]["periodicity"]["meanshift"]
    assert meanshift["source"] == "heatmap"
    (operation,) = meanshift["operations"]
    assert 7.6 - 1e-9 <= operation["period"] <= 8.0 + 1e-9  # multiples of the 0.8 s bin
    assert operation["occurrences"] == 5
    assert result["read"]["periodicity"]["verdict"]["source"] == "meanshift"


@pytest.mark.parametrize(
    "job, quarters",
    [
        ("2111031", (0.0, 20.0, 60.0, 20.0)),
        ("2111157", (0.0, 20.0, 59.36, 20.64)),
        ("2111375", (0.0, 39.74, 40.26, 20.0)),
    ],
)
def test_dlio_b_quarters_come_from_the_heatmap(job, quarters):
    """Each file record spreads its bytes over its first-to-last read window, idle gaps
    included: quarters 0/14/68/18, after_start_before_end. The read HEATMAP shows five equal
    epochs split 0/20/60/20 (0/40/40/20 for the 2111375 group): the middle is exactly 4x the
    ends (3.84x on 2111157), and the rule needs strictly more (SPEC 3.6)."""
    config = Config()
    read = analyze(read_trace(dlio(job), config), config).read
    assert read.chunks_source == "heatmap"
    shares = 100 * read.chunks / read.chunks.sum()
    assert shares.tolist() == pytest.approx(quarters, abs=0.01)
    assert read.chunks.sum() == pytest.approx(read.bytes, rel=1e-12)
    assert "read_unclassified" in read.labels
    assert "read_after_start_before_end" not in read.labels


def test_dlio_b_bursts_by_hand():
    """2111031's read HEATMAP (0.8 s bins): two minor bursts of a few kB, then five epochs."""
    config = Config()
    read = analyze(read_trace(dlio("2111031"), config), config).read
    bursts = read.bursts
    assert bursts.starts.tolist() == pytest.approx([0.0, 17.6, 37.6, 46.4, 54.4, 61.6, 69.6])
    assert bursts.ends.tolist() == pytest.approx([0.8, 18.4, 41.6, 50.4, 58.4, 65.6, 73.6])
    assert bursts.minor.tolist() == [True, True, False, False, False, False, False]
    (where,) = read.meanshift["occurrences"]
    assert where["starts"].tolist() == pytest.approx([37.6, 46.4, 54.4, 61.6, 69.6])
    # the last segment takes the previous one's 8 s (longer than its own 4 s burst)
    assert where["durations"].tolist() == pytest.approx([8.8, 8.0, 7.2, 8.0, 8.0])
    assert read.verdict["period"] == pytest.approx(8.0)  # median of 8.8, 8.0, 7.2, 8.0


@pytest.mark.parametrize("job", DLIO_A_PERIODIC)
def test_dlio_a_periodic_epochs(job):
    result = categorize_file(dlio(job), Config())
    assert periodic_labels(result, "read")[:2] == ["read_periodic", "read_periodic_second"]
    assert result["read"]["periodicity"]["meanshift"]["source"] == "heatmap"


@pytest.mark.parametrize(
    "job, epochs",
    [
        ("2110489", [75.2, 84.0, 91.2, 99.2, 106.4]),
        ("2110532", [56.0, 64.8, 72.8, 80.0, 88.0]),
        ("2110533", [56.8, 64.8, 72.8, 80.0, 88.0]),
    ],
)
def test_dlio_a_first_epoch_split_by_one_empty_bin_is_one_occurrence(job, epochs):
    """One empty 0.8 s bin splits the first epoch in two bursts (1.00 + 1.16, 1.19 + 0.93,
    1.02 + 1.00 GB against ~2.1 GB epochs): 4 of 6 bursts alike, 67 % < 75 %. Joined, they are
    the first of five epochs ~8 s apart (SPEC 3.5); the FFT alone stays under its gate."""
    config = Config()
    read = analyze(read_trace(dlio(job), config), config).read
    assert read.bursts.joined.tolist() == [True, False, False, False, False]
    assert read.meanshift["source"] == "heatmap" and read.meanshift["share"] == 1.0
    (where,) = read.meanshift["occurrences"]
    assert where["starts"].tolist() == pytest.approx(epochs)
    assert 7.6 - 1e-9 <= read.verdict["period"] <= 8.0 + 1e-9
    assert [label for label in read.labels if label.startswith("read_periodic")][:2] == [
        "read_periodic",
        "read_periodic_second",
    ]
    assert not read.fft["periodic"]


@pytest.mark.parametrize(
    "job, busy, high",
    [
        ("2110483", 69.9, False),
        ("2110488", 68.9, False),
        ("2110489", 69.5, False),
        ("2110532", 68.5, False),
        ("2110533", 71.3, False),
        ("2110531", 76.7, True),
    ],
)
def test_dlio_a_busy_time_weights_edge_bins_by_fill(job, busy, high):
    """Whole 0.8 s bins put these readers at 77.2/75.2/81.7/80.1/81.8/83.8 % busy: an epoch's
    first and last bins hold 11-79 MB of a ~240 MB bin, and the empty bin inside a joined epoch
    (2110489, 2110532, 2110533) counted as busy. Edge bins by their fill, no join gap: all but
    2110531 fall under the 75 % of periodic_high_busy_time (SPEC 3.5)."""
    result = categorize_file(dlio(job), Config())
    verdict = result["read"]["periodicity"]["verdict"]
    assert 100 * verdict["busy_fraction"] == pytest.approx(busy, abs=0.05)
    assert ("read_periodic_high_busy_time" in result["categories"]) is high


def _write_busy(path, **settings):
    config = Config(**settings)
    trace = read_trace(path, config)
    return trace, analyze(trace, config).write


APPEND_7S = RUNTIME_LOGS / "darshan-main" / "pub_heatmap_append_7s.darshan"
SAMEFILE_8S = RUNTIME_LOGS / "darshan-main-programs" / "pub_samefile_heatmap_8s.darshan"


def test_coarse_bins_bound_the_busy_time_by_the_time_spent():
    """pub_heatmap_append_7s appends ~0.12 s every 7.05 s into 0.8 s bins: 11 one-bin bursts and
    one of 1.519 s, 10.319 s of bins, 12.17 % of each period. Its records spent 1.478 s
    writing (the slowest rank's path, SPEC 3.9): each burst keeps 1.478 / 10.319 of its bins,
    12.17 % * 0.14327 = 1.744 %. The label stays low busy time; the reason gives both figures."""
    from mosaic.analysis.reasons import categorize_explained

    _, unbounded = _write_busy(APPEND_7S, busy_bounded_by_time_spent=False)
    assert unbounded.verdict["busy_fraction"] == pytest.approx(0.121746, abs=1e-6)
    assert unbounded.bursts.bound is None
    trace, write = _write_busy(APPEND_7S)
    assert trace.performance["job"]["write"]["time"] == pytest.approx(1.478397, abs=1e-6)
    assert write.bursts.bound == pytest.approx((10.318873, 1.478397), abs=1e-6)
    assert write.verdict["busy_fraction"] == pytest.approx(0.121746 * 1.478397 / 10.318873, rel=1e-5)
    assert write.labels == unbounded.labels and "write_periodic_low_busy_time" in write.labels
    reasons = categorize_explained(trace, Config())["reasons"]
    (busy,) = [r for r in reasons if r["label"] == "write_periodic_low_busy_time"]
    assert "busy 1.74 % of each period" in busy["text"]
    assert "bounded by the 1.48 s the job spent writing" in busy["text"]
    assert "0.8 s heatmap bins gave 12.2 %" in busy["text"]


def test_a_minor_burst_counts_in_the_time_it_shares():
    """pub_samefile_heatmap_8s: 13 one-bin bursts (one minor), 10.4 s of bins, against 0.211 s
    spent writing; a period's bin is 10 % of its 8 s, and it keeps 0.211 / 10.4 of it:
    0.203 % (the minor burst took its share of the time spent too)."""
    _, write = _write_busy(SAMEFILE_8S)
    assert int(write.bursts.minor.sum()) == 1
    assert write.bursts.bound == pytest.approx((10.4, 0.210998), abs=1e-6)
    assert write.verdict["busy_fraction"] == pytest.approx(0.10 * 0.210998 / 10.4, rel=1e-4)


@pytest.mark.parametrize("lower_bound, time", [(True, 1.478397), (False, None)])
def test_no_bound_from_a_time_not_known_or_a_lower_bound(lower_bound, time):
    """A partial log's time is a lower bound, and a time of 0 with bytes is not known
    (SPEC 3.9): neither cuts the bins' 12.17 %."""
    config = Config()
    trace = read_trace(APPEND_7S, config)
    trace.performance["job"]["lower_bound"] = lower_bound
    trace.performance["job"]["write"]["time"] = time
    write = analyze(trace, config).write
    assert write.bursts.bound is None
    assert write.verdict["busy_fraction"] == pytest.approx(0.121746, abs=1e-6)


def test_fine_bins_keep_their_busy_time():
    """DLIO 2110531 reads each 8 s epoch over ~8 bins of 0.8 s, between its steps: its
    calls took far less than the bins (it reads faster than it consumes), but the bins
    show the epoch's span themselves. Not coarse, so the bound leaves 76.7 % and its
    high busy time; the reason names no bound."""
    from mosaic.analysis.reasons import categorize_explained

    config = Config()
    trace = read_trace(dlio("2110531"), config)
    read = analyze(trace, config).read
    assert trace.performance["job"]["read"]["time"] < float(read.bursts.busy.sum()) / 3
    assert read.bursts.bound is None
    assert 100 * read.verdict["busy_fraction"] == pytest.approx(76.7, abs=0.05)
    reasons = categorize_explained(trace, config)["reasons"]
    (high,) = [r for r in reasons if r["label"] == "read_periodic_high_busy_time"]
    assert "upper bound" not in high["text"] and "bounded by" not in high["text"]


@pytest.mark.parametrize("folder", ["darshan-main", "darshan-2.3.1"])
def test_a_stalled_checkpoint_is_no_minor_operation(folder):
    """pub_ckpt_newfile_7s wrote 12 checkpoints every 7 s; checkpoint 6 (45.08-46.18 s, 8 MiB per
    rank at 7.7-9.5 MB/s against a median 1.4 GB/s) was under 1 % of the median rate, so it was
    minor and the 38-52 s segment fell out of the cluster: "10 write phases". It moves a
    checkpoint's bytes beside no faster traffic: 12 phases (SPEC 3.3)."""
    (path,) = (RUNTIME_LOGS / folder).glob("pub_ckpt_newfile_7s.darshan*")
    config = Config()
    write = analyze(read_trace(path, config), config).write
    assert not write.merged.minor.any()
    (operation,) = write.meanshift["operations"]
    assert operation["occurrences"] == 12
    assert operation["period"] == pytest.approx(7.0, abs=0.01)


def test_a_period_below_the_bins_and_its_resolution():
    """pub_heatmap_append_7s appends every 7.0 s: its bursts start on 0.8 s bin edges, 9 x 7.2
    and 2 x 6.4 s apart, and the median said 7.2 s. The 11 intervals span 11 periods, 77.6 s:
    7.055 +- 0.073 s (0.8 / 11), and the reason says both (SPEC 3.5)."""
    from mosaic.analysis.reasons import categorize_explained

    path = RUNTIME_LOGS / "darshan-main" / "pub_heatmap_append_7s.darshan"
    explained = categorize_explained(read_trace(path, Config()), Config())
    (operation,) = explained["write"]["periodicity"]["meanshift"]["operations"]
    assert operation["period"] == pytest.approx(77.6 / 11)
    assert operation["period_resolution"] == pytest.approx(0.8 / 11)
    assert explained["write"]["periodicity"]["verdict"]["period"] == pytest.approx(77.6 / 11)
    (periodic,) = [r for r in explained["reasons"] if r["label"] == "write_periodic"]
    assert "12 write heatmap bursts every 7.05 s (+- 0.0727 s)" in periodic["text"]


def test_dlio_2110720_counts_five_epochs_of_two_bursts():
    """Not "6 read heatmap bursts": the dominant cluster's sixth member lies 4 s after the fifth,
    in the same epoch; 10 bursts make 5 cycles of 2."""
    from mosaic.analysis.reasons import categorize_explained

    explained = categorize_explained(read_trace(dlio("2110720"), Config()), Config())
    (periodic,) = [r for r in explained["reasons"] if r["label"] == "read_periodic"]
    assert periodic["text"].startswith("read periodic: 5 cycles of 2 read heatmap bursts every 8 s")
    assert periodic["numbers"]["cycles"] == 5
    # The second bursts start at bins 77, 87, 96 and 106 (0.8 s): 29 bins over 3 periods,
    # 7.73 +- 0.267 s, said with its own resolution (the median interval, 10 bins, said 8 s;
    # the epochs shorten from 9 bins to 7, so their second bursts come every 7.6-7.7 s)
    assert "beside them 4 every 7.73 s (+- 0.267 s), 895 MB each" in periodic["text"]
    second = "read.periodicity.meanshift.operations.1"
    assert periodic["numbers"][f"{second}.period"] == pytest.approx(29 * 0.8 / 3)
    assert periodic["numbers"][f"{second}.period_resolution"] == pytest.approx(0.8 / 3)
    # its busy fraction is of the 4.0-5.6 s segments the second bursts cut, not of the 8 s
    (busy,) = [r for r in explained["reasons"] if r["label"] == "read_periodic_high_busy_time"]
    assert busy["text"] == (
        "read periodic_high_busy_time not given: busy 62.3 % of each segment, from a burst to the "
        "next of its cycle (not of the period), under 75 %"
    )


def test_bytes_through_dfs_are_said_not_counted():
    """ior-DFS moved 16,777,216 B each way through DFS (and DAOS counts them again below it:
    16,777,744 read, 16,777,304 written), none through POSIX or STDIO: "0 B moved" read as no
    I/O (SPEC 2, "What is not counted"). A log without DFS or DAOS keeps "moved"."""
    from mosaic.analysis.reasons import categorize_explained

    path = shared("snyder_ior-DFS_id4681120-53379_5-8-15060-3270540599978592154_1.darshan")
    reasons = categorize_explained(read_trace(path, Config()), Config())["reasons"]
    texts = {r["label"]: r["text"] for r in reasons}
    for direction in ("read", "write"):
        assert texts[f"{direction}_insignificant"] == (
            f"{direction} insignificant: 0 B through POSIX, MPI-IO and STDIO "
            "(DFS and DAOS not counted), under 100 MB"
        )
    # its 32 DFS opens and 2 lookups are not requests here either: "peak 0/s" says which
    assert texts["metadata_insignificant_load"] == (
        "metadata insignificant_load: peak 0/s at 0 s, not more than 250; 0 seconds with >= 50 "
        "requests, fewer than 5; requests of POSIX and STDIO only (DFS and DAOS not counted)"
    )
    posix = categorize_explained(read_trace(shared("skew-app.darshan"), Config()), Config())["reasons"]
    assert "read insignificant: 0 B moved, under 100 MB" in [r["text"] for r in posix]
    assert not any("not counted" in r["text"] for r in posix)


def test_one_spike_second_is_one_second():
    """treddy_h5d_no_h5f: 102 requests at 0 s, its one second of >= 50 ("1 seconds" before)."""
    from mosaic.analysis.reasons import categorize_explained

    trace = read_trace(shared("treddy_h5d_no_h5f.darshan"), Config())
    texts = [r["text"] for r in categorize_explained(trace, Config())["reasons"]]
    assert (
        "metadata insignificant_load: peak 102/s at 0 s, not more than 250; 1 second with >= 50 "
        "requests, fewer than 5"
    ) in texts


def test_e3sm_heatmap_only_keeps_its_spike_and_no_false_period():
    """314,446 aggregator seeks made 305,488 'requests' in one second; without them: 368/s.
    The input's shared POSIX record has 514 opens over 0.030-5.419 s, but 512 of them are
    the MPI-IO record's collective opens in 5.376-5.420 s (closes 6.287-6.354 s): spread
    over the POSIX window they made seconds 0-4 spikes of 95.4/s (SPEC 3.7)."""
    path = shared("e3sm_io_heatmap_only.darshan")
    config = Config()
    analysis = analyze(read_trace(path, config), config)
    per_second = analysis.requests_per_second
    assert (per_second >= 50).nonzero()[0].tolist() == [5, 6, 697, 710]
    assert per_second[697] == pytest.approx(55.0, abs=0.05)
    assert per_second[710] == pytest.approx(57.5, abs=0.05)
    assert per_second[:5].max() < 1
    assert analysis.metadata_labels == ["metadata_high_spike"]
    assert metadata_labels(categorize_file(path, PAPER)) == THREE
    assert periodic_labels(categorize_file(path, config), "write") == []
    assert periodic_labels(categorize_file(path, config), "read") == []


def test_skew_app_closes_in_the_collective_close():
    """65,537 POSIX closes over 9681.7-10435.2 s made 752 seconds of 87 closes; 65,536 of them
    are the MPI-IO record's collective close, 10434.948-10435.237 s: 4 spikes, opens and
    closes, so no multiple_spikes (SPEC 3.7)."""
    result = categorize_file(shared("skew-app.darshan"), Config())
    assert metadata_labels(result) == ["metadata_high_spike"]
    assert result["metadata"]["spikes"] == 4
    assert result["metadata"]["requests"] == 2 * 65_537


def test_ior_one_seek_per_mib_read():
    """skew-autobench-ior: 528,383 seeks; its opens alone make one high spike. 4,096 of the
    8,197 requests at 0 s were the STDIO records of <STDOUT> and <STDERR> (2,048 opens each,
    anonymized names, known by their record ids): 4,101.34 are left (SPEC 2)."""
    path = shared("skew-autobench-ior.darshan")
    result = categorize_file(path, Config())
    assert metadata_labels(result) == ["metadata_high_spike"]
    assert result["metadata"]["peak_per_second"] == pytest.approx(4101.34, abs=0.01)
    assert result["metadata"]["requests"] == 16_388 - 2 * 2048
    assert metadata_labels(categorize_file(path, PAPER)) == THREE


def test_nonmpi_dxt_keeps_only_multiple_spikes():
    """15,371 seeks beside the opens. Each fopen was counted twice (STDIO_OPENS 250 and
    POSIX_OPENS 250 = POSIX_FILENOS 250): without the filenos and the std streams (known by
    record id under anonymized names) the peak is 83.2/s, not 132.6/s, the mean 29.5/s, not
    47.2/s (no longer near the 50/s of high density), 884 requests, not 1,417 (SPEC 3.7)."""
    path = shared("nonmpi_dxt_anonymized.darshan")
    result = categorize_file(path, Config())
    assert metadata_labels(result) == ["metadata_multiple_spikes"]
    assert result["metadata"]["requests"] == 884
    assert result["metadata"]["peak_per_second"] == pytest.approx(83.22, abs=0.01)
    assert result["metadata"]["mean_per_second"] == pytest.approx(29.47, abs=0.01)
    assert result["metadata"]["spikes"] == 9
    assert metadata_labels(categorize_file(path, PAPER)) == THREE


def test_imbalanced_io_stand_ins_count_rank_0_alone():
    """Two shared MPI-IO records (496 collective opens each) stand in for rank 0's lost POSIX
    records; ranks 1-495 have theirs. Counting all 496 ranks again added 2 x 990 requests
    (peak 1983.8/s); peak 993.9/s, with the collective opens of the third shared file in
    their MPI-IO window (SPEC 3.7). Rank 0's <STDIN> record (anonymized name, record id
    14734109647742566553) counts 14,689 opens, all POSIX_FILENOS, never closed: a flat
    ~272/s over 55 s made multiple spikes. Without the filenos (<STDERR> 24, <STDOUT> 36
    more) and the two STDIO stream records (1 open each): 18,767 - 14,751 = 4,016 requests,
    3 seconds of 50 or more, the high spike alone."""
    result = categorize_file(shared("imbalanced-io.darshan"), Config())
    assert result["metadata"]["requests"] == 18_767 - 14_689 - 24 - 36 - 2
    assert result["metadata"]["peak_per_second"] == pytest.approx(993.93, abs=0.01)
    assert result["metadata"]["mean_per_second"] == pytest.approx(4016 / 1479)
    assert result["metadata"]["spikes"] == 3
    assert metadata_labels(result) == ["metadata_high_spike"]


def test_dlio_2110720_two_reads_per_epoch_recur_every_8_s():
    """Two heatmap bursts per 8 s epoch (4.0 s and 1.6 s long, 0.91 and 0.89 GB): each cluster
    recurs every ~8 s; mixing both clusters into one series of their volume said 4.0 s (SPEC
    3.4). Below the 0.8 s bins (SPEC 3.5): the first cluster's intervals 8.8, 8.0, 7.2, 8.0 span
    4 periods, 32 s: 8.0 +- 0.2 s (its sixth member, 4 s after the fifth, is the last epoch's
    second burst: the last segment copies the previous length); the second's 8.0, 7.2, 8.0
    span 3: 7.73 +- 0.27 s."""
    result = categorize_file(dlio("2110720"), Config())
    assert periodic_labels(result, "read")[:2] == ["read_periodic", "read_periodic_second"]
    operations = result["read"]["periodicity"]["meanshift"]["operations"]
    assert [(op["occurrences"], op["period"], op["period_resolution"]) for op in operations] == [
        (6, pytest.approx(8.0), pytest.approx(0.2)),
        (4, pytest.approx(23.2 / 3), pytest.approx(0.8 / 3)),
    ]
    assert result["read"]["periodicity"]["verdict"]["period"] == pytest.approx(8.0)
