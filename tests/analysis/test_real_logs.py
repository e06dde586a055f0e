"""Every real third-party log categorizes (or is evicted with a reason) into valid JSON."""

import json

import pytest

from mosaic.analysis.labels import ALL_LABELS, FAMILIES
from mosaic.config import Config
from mosaic.logfile import categorize_file
from mosaic_testing.logs import REAL_LOGS, pydarshan_example_logs, real_logs

REASONS = {
    "unreadable",
    "truncated",
    "corrupt_stream",
    "unsupported_version",
    "bad_job",
    "no_io_modules",
    "partial",
}


def one_temporality_outcome(categories: list[str], direction: str) -> bool:
    """insignificant alone, or temporality labels (or unclassified) without it."""
    found = [c for c in categories if c in FAMILIES[f"{direction}_temporality"]]
    if f"{direction}_insignificant" in found:
        return found == [f"{direction}_insignificant"] and not any(
            c.startswith(f"{direction}_periodic") for c in categories
        )
    return bool(found) and (f"{direction}_unclassified" not in found or len(found) == 1)


@pytest.mark.parametrize("path", real_logs() + pydarshan_example_logs(), ids=lambda p: p.name[:40])
def test_real_log_gives_a_consistent_result(path):
    result = categorize_file(path, Config())
    assert json.loads(json.dumps(result)) == result
    if result["status"] == "evicted":
        assert result["reason"] in REASONS
        return
    categories = result["categories"]
    assert categories == sorted(categories, key=ALL_LABELS.index)
    assert one_temporality_outcome(categories, "read")
    assert one_temporality_outcome(categories, "write")
    for direction in ("read", "write"):
        part = result[direction]
        assert sum(part["chunks_bytes"]) == pytest.approx(part["bytes"], rel=1e-9, abs=1e-6)
        assert part["merged_operations"] <= part["operations"] - part["minor_operations"]
    meta = result["metadata"]  # the mean and the peak of one per-second series (SPEC 3.7)
    assert meta["mean_per_second"] <= meta["peak_per_second"] + 1e-6


def test_a_run_of_72_ms_has_its_mean_metadata_rate_no_higher_than_its_peak():
    """mpi-io-test 3.4.7: 0.0721 s, 16 opens and 16 closes in its one second. The mean was
    32 / 0.0721 s = 443.8/s beside a peak of 32/s; over the one bin it is 32/s."""
    path = REAL_LOGS / "release_logs" / "mpi-io-test-x86_64-3.4.7.darshan"
    result = categorize_file(path, Config())
    assert result["job"]["run_time"] == pytest.approx(0.07211, abs=1e-5)
    assert result["metadata"] == {
        "requests": 32.0,
        "peak_per_second": 32.0,
        "spikes": 0,
        "mean_per_second": 32.0,
    }


def test_requests_every_84ms_in_one_phase_are_not_a_period(shared_logs):
    """mpi_io_test_with_dxt: 128 serialized 16 MiB writes every 84 ms in one 10 s phase (SPEC 3.4)."""
    (path,) = [p for p in shared_logs if p.parent.name.startswith("mpi_io_test_with_dxt")]
    result = categorize_file(path, Config())
    assert not any(c.startswith("write_periodic") for c in result["categories"])
    assert result["write"]["periodicity"]["verdict"]["periodic"] is False


@pytest.mark.parametrize("path", real_logs() + pydarshan_example_logs(), ids=lambda p: p.name[:40])
def test_validation_facts_equal_the_trace(path):
    """Validation's light facts (no operations, metadata or heatmap built) give deduplication
    the same heaviness, job and counts as the full trace, DXT-traced files included."""
    from mosaic.darshan.reader import read_log
    from mosaic.errors import LogError
    from mosaic.trace import build_trace, log_facts

    config = Config()
    try:
        log = read_log(path)
        trace = build_trace(log, str(path), config)
    except LogError as error:
        with pytest.raises(LogError) as raised:
            log_facts(read_log(path), config)
        assert raised.value.reason == error.reason
        return
    facts = log_facts(log, config)
    assert facts.total_bytes == pytest.approx(trace.total_bytes, rel=1e-12)
    assert (facts.job, facts.partial, facts.dropped_records) == (
        trace.job,
        trace.partial,
        trace.dropped_records,
    )
    assert facts.group_key("cmdline") == trace.group_key("cmdline")
