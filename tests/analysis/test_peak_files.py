"""The files behind the metadata peak, in the reasons and on the job page (issue 46 item 16)."""

import numpy as np
import pytest

from mosaic.analysis.categorize import analyze
from mosaic.analysis.metadata import requests_in_seconds
from mosaic.analysis.peak_files import file_name, peak_files
from mosaic.analysis.reasons import explain
from mosaic.config import Config
from mosaic.html.job import analysis_page
from mosaic.html.page import Assets
from mosaic.trace import read_trace
from mosaic_testing.handmade import posix_v4, v3_log
from mosaic_testing.logs import REAL_LOGS

CFG = Config()
STDIN = 14734109647742566553
IMBALANCED = REAL_LOGS / "imbalanced_io" / "imbalanced-io.darshan"


def never_closed(at, until=None):
    return {"open_start": at, "open_end": at if until is None else until}


# Second 5 of a 100 s run: /scratch/a 150 + 150 opens (ranks 0 and 1), /scratch/b half of
# 100 opens over 4.5-5.5 s, /scratch/c 40 opens and their 40 closes, /scratch/d 10, /scratch/e 5.
RECORDS = [
    posix_v4(11, 0, opens=150, times=never_closed(5.2)),
    posix_v4(11, 1, opens=150, times=never_closed(5.3)),
    posix_v4(12, 0, opens=100, times=never_closed(4.5, 5.5)),
    posix_v4(
        13, 2, opens=40, times={"open_start": 5.9, "open_end": 5.9, "close_start": 5.95, "close_end": 5.95}
    ),
    posix_v4(14, 3, opens=10, times=never_closed(5.0)),
    posix_v4(15, 3, opens=5, times=never_closed(5.99)),
]
NAMES = {11: "/scratch/a", 12: "/scratch/b", 13: "/scratch/c", 14: "/scratch/d", 15: "/scratch/e"}


def analysis_of(tmp_path, names):
    path = tmp_path / "peak.darshan"
    path.write_bytes(v3_log(names=names, modules={"POSIX": (4, RECORDS)}))
    return analyze(read_trace(path, CFG), CFG)


def metadata_reason(analysis, label):
    return next(r for r in explain(analysis, CFG) if r["label"] == label)


def test_the_high_spike_names_the_files_behind_it(tmp_path):
    analysis = analysis_of(tmp_path, NAMES)
    assert analysis.metadata["peak_per_second"] == 445.0  # 300 + 80 + 50 + 10 + 5
    reason = metadata_reason(analysis, "metadata_high_spike")
    assert reason["text"] == (
        "metadata high_spike: 445 requests in the second at 5 s, more than 250; the files behind the "
        "peak: /scratch/a (300 requests, 67.4 %), /scratch/c (80 requests, 18 %), "
        "/scratch/b (50 requests, 11.2 %) and 2 more files"
    )
    numbers = reason["numbers"]
    assert [numbers[f"peak_file_{k}_record_id"] for k in (1, 2, 3)] == [11, 13, 12]
    assert numbers["peak_file_1_share"] == pytest.approx(300 / 445)
    assert numbers["peak_files_others"] == 2


def test_an_anonymized_log_names_its_files_by_record_id(tmp_path):
    """darshan-convert's anonymization renames <STDIN> too: the names are not the paths."""
    hashed = {rid: f"/scratch/{rid * 7919}" for rid in NAMES} | {STDIN: "4232606288"}
    behind = peak_files(analysis_of(tmp_path, hashed).trace, [5], 2, metadata_seeks=False)
    assert behind == {
        "seconds": [5],
        "requests": 445.0,
        "files": [
            {"record_id": 11, "name": "record 11", "requests": 300.0, "share": 300 / 445},
            {"record_id": 13, "name": "record 13", "requests": 80.0, "share": 80 / 445},
        ],
        "others": 3,
    }


@pytest.mark.parametrize(
    "rid, names, anonymized, expected",
    [
        (STDIN, {STDIN: "4232606288"}, True, "<STDIN>"),  # a stream by its id, whatever its name
        (7238257241479193519, {}, False, "<STDERR>"),
        (5, {5: "/scratch/x"}, False, "/scratch/x"),
        (5, {5: "/scratch/x"}, True, "record 5"),
        (5, {}, False, "record 5"),  # no name record
    ],
)
def test_file_names(rid, names, anonymized, expected):
    assert file_name(rid, names, anonymized) == expected


def test_the_job_page_lists_the_files_behind_the_peak(tmp_path):
    html = analysis_page(analysis_of(tmp_path, NAMES), CFG, Assets(inline=False))
    assert "the files behind the peak: /scratch/a (300 requests, 67.4 %)" in html  # the reason
    assert "445 requests in the second at 5 s" in html
    assert "<td>/scratch/a</td><td>11</td><td>300</td><td>67.4\u00a0%</td>" in html
    assert "<td>/scratch/b</td><td>12</td><td>50</td><td>11.2\u00a0%</td>" in html
    # 10 + 5 of 445: the rest of the second, not "with fewer requests" (a tie may be cut too)
    assert "<p>and 2 more files, 15 requests between them.</p>" in html


def test_imbalanced_io_peak_is_two_files_opened_and_closed_by_all_496_ranks():
    """Second 291 (993.93 requests): the 496 closes of anonymized /lus/theta-fs0/830923601 at
    291.454 s and the 496 opens of /lus/theta-fs0/312046190 at 291.50-291.52 s (495 POSIX
    records, ranks 1-495, and an MPI-IO record standing in for rank 0's lost one), plus
    1.93 from /lus/theta-fs0/3981085427's opens and closes spread over 66.7-1478 s:
    992 / 881.1 s + 2 / 881.1 s + 2 / 1411.7 s + 992 / 1236.7 s."""
    analysis = analyze(read_trace(IMBALANCED, CFG), CFG)
    behind = peak_files(analysis.trace, [291], 3, metadata_seeks=False)
    assert [(f["record_id"], f["name"]) for f in behind["files"]] == [
        (8806567884913829876, "record 8806567884913829876"),  # lower id first on a tie
        (17143336642595553601, "record 17143336642595553601"),
        (15708535418621378501, "record 15708535418621378501"),
    ]
    assert [f["requests"] for f in behind["files"]] == pytest.approx([496, 496, 1.93170], abs=1e-5)
    assert behind["requests"] == pytest.approx(analysis.metadata["peak_per_second"], abs=1e-6)
    assert behind["others"] == 0
    text = metadata_reason(analysis, "metadata_high_spike")["text"]
    assert (
        "at 291 s, more than 250; the files behind the peak: record 8806567884913829876 "
        "(496 requests, 49.9 %), record 17143336642595553601 (496 requests, 49.9 %), "
        "record 15708535418621378501 (1.93 requests, 0.194 %); a partial log" in text
    )


# Five spike seconds of a 100 s run: /scratch/a 60 opens at 10.2, 20.2 and 30.2 s (ranks
# 0-2), /scratch/b 60 at 40.2 and 50.2 s, /scratch/d 10 at 10.5 s; /scratch/c 300 opens
# over 60-70 s (30/s: no spike, so not behind them).
SPIKES = [
    posix_v4(21, 0, opens=60, times=never_closed(10.2)),
    posix_v4(21, 1, opens=60, times=never_closed(20.2)),
    posix_v4(21, 2, opens=60, times=never_closed(30.2)),
    posix_v4(22, 0, opens=60, times=never_closed(40.2)),
    posix_v4(22, 1, opens=60, times=never_closed(50.2)),
    posix_v4(23, 0, opens=300, times=never_closed(60.0, 70.0)),
    posix_v4(24, 0, opens=10, times=never_closed(10.5)),
]
SPIKE_NAMES = {21: "/scratch/a", 22: "/scratch/b", 23: "/scratch/c", 24: "/scratch/d"}


def test_multiple_spikes_name_the_files_behind_every_spike_not_the_peak_alone(tmp_path):
    """The peak (second 10: 70 requests) is /scratch/a and /scratch/d; the five spikes
    together (310 requests) are /scratch/a 180, /scratch/b 120 and /scratch/d 10."""
    path = tmp_path / "spikes.darshan"
    path.write_bytes(v3_log(names=SPIKE_NAMES, modules={"POSIX": (4, SPIKES)}))
    analysis = analyze(read_trace(path, CFG), CFG)
    assert (analysis.metadata["spikes"], analysis.metadata["peak_per_second"]) == (5, 70.0)
    reason = metadata_reason(analysis, "metadata_multiple_spikes")
    assert reason["text"] == (
        "metadata multiple_spikes (close call): 5 seconds with >= 50 requests (peak 70/s at 10 s), "
        "at least 5; the files behind the 5 spikes: /scratch/a (180 requests, 58.1 %), "
        "/scratch/b (120 requests, 38.7 %), /scratch/d (10 requests, 3.23 %)"
    )
    numbers = reason["numbers"]
    assert [numbers[f"spike_file_{k}_record_id"] for k in (1, 2, 3)] == [21, 22, 24]
    assert numbers["spike_file_2_share"] == pytest.approx(120 / 310)
    assert "spike_files_others" not in numbers


def test_requests_in_seconds_takes_each_windows_share_of_the_chosen_seconds(tmp_path):
    """30 opens over 4.5-7.5 s: 5 in second 4, 10 in 5, 10 in 6, 5 in 7; an instant at 9.25 s."""
    path = tmp_path / "windows.darshan"
    records = [
        posix_v4(31, 0, opens=30, times=never_closed(4.5, 7.5)),
        posix_v4(32, 0, opens=4, times={"open_start": 9.25, "close_start": 9.25, "close_end": 9.25}),
    ]
    path.write_bytes(v3_log(names={31: "/scratch/w", 32: "/scratch/i"}, modules={"POSIX": (4, records)}))
    meta = read_trace(path, CFG).meta
    run_time = read_trace(path, CFG).run_time

    def shares(seconds):
        return requests_in_seconds(meta, np.array(seconds), run_time, metadata_seeks=False).tolist()

    assert shares([5, 7]) == pytest.approx([15.0, 0.0])
    assert shares([4, 5, 6, 7]) == pytest.approx([30.0, 0.0])
    assert shares([9]) == pytest.approx([0.0, 8.0])  # 4 opens and their 4 closes
    assert shares([]) == pytest.approx([0.0, 0.0])
