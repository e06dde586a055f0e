import dataclasses
import subprocess
import sys
from pathlib import Path

import dispy
import pytest

from mosaic.config import SECTIONS, Config

MOSAIC = str(Path(sys.executable).parent / "mosaic")


def test_toml_overrides_flat_and_section_keys(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text(
        "significant_bytes = 5e7\n[method]\nmetadata_high_spike = 300\n[execution]\nbatch_size = 16\n"
    )
    cfg = Config.from_toml(path)
    assert cfg.significant_bytes == 5e7
    assert cfg.metadata_high_spike == 300
    assert cfg.batch_size == 16
    assert cfg.steady_cv == 0.25
    assert cfg.hash() != Config().hash()


def test_unknown_key_is_an_error(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text("signifcant_bytes = 1\n")
    with pytest.raises(ValueError, match="signifcant_bytes"):
        Config.from_toml(path)


@pytest.mark.parametrize(
    "text, message",
    [
        ("[metadata]\nmetadata_high_spike = 300\n", r"unknown table \[metadata\]"),
        ("[execution]\nsignificant_bytes = 1\n", r"significant_bytes not in \[execution\]"),
    ],
)
def test_tables_are_sections(tmp_path, text, message):
    path = tmp_path / "c.toml"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        Config.from_toml(path)


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"verdict_rule": "meanshift_or_sig_fft"}, "verdict_rule = 'meanshift_or_sig_fft': choose from"),
        ({"group_by": "application"}, "group_by = 'application': choose from 'app', 'cmdline'"),
        (
            {"meanshift_bandwidth": -0.1},
            r"meanshift_bandwidth = -0.1: must be a finite number in \(0.0, inf\]",
        ),
        ({"meanshift_bandwidth": 0.0}, r"meanshift_bandwidth = 0.0: must be"),
        ({"periodic_segment_share": 1.01}, r"periodic_segment_share = 1.01: .* \[0.0, 1.0\]"),
        ({"significant_bytes": float("nan")}, "significant_bytes = nan"),
        ({"batch_size": 0}, "batch_size = 0"),
        ({"batch_size": 2.5}, "batch_size = 2.5: expected int"),
        ({"strict": "yes"}, "strict = 'yes': expected bool"),
        ({"steady_cv": True}, "steady_cv = True: expected float"),
        ({"mounts": ("/scratch", 3)}, "mounts = .*: expected a list of str"),
    ],
)
def test_bad_values_stop_at_construction(changes, message):
    with pytest.raises(ValueError, match=message):
        Config().replace(**changes)


def test_range_edges_are_allowed():
    cfg = Config(periodic_segment_share=1.0, significant_bytes=0, min_period_seconds=0.0)
    assert cfg.periodic_segment_share == 1.0 and cfg.significant_bytes == 0


@pytest.mark.parametrize(
    "changes, message",
    [
        # strict orderings: equal is refused, and so is just past it
        (
            {"low_busy_max": 0.5, "high_busy_min": 0.5},
            r"low_busy_max = 0.5, high_busy_min = 0.5: need low_busy_max < high_busy_min",
        ),
        (
            {"low_busy_max": 0.75, "high_busy_min": 0.7499},
            r"low_busy_max = 0.75, high_busy_min = 0.7499: need",
        ),
        (
            {"period_second_max": 1800.0},
            r"period_second_max = 1800.0, period_minute_max = 1800.0: need period_second_max < period_min",
        ),
        (
            {"period_hour_max": 1799.0},
            r"period_minute_max = 1800.0, period_hour_max = 1799.0: need period_minute_max < period_hour_max",
        ),
        # fft_min_samples may equal fft_max_samples, never exceed it
        (
            {"fft_min_samples": 1025, "fft_max_samples": 1024},
            r"fft_min_samples = 1025, fft_max_samples = 1024: need fft_min_samples <= fft_max_samples",
        ),
        (
            {"service_latency_buckets": (0.1, 0.1)},
            r"service_latency_buckets = \[0.1, 0.1\]: bounds must increase",
        ),
    ],
)
def test_fields_out_of_order_stop_at_construction_naming_both(changes, message):
    with pytest.raises(ValueError, match=message):
        Config().replace(**changes)


def test_order_edges_are_allowed():
    cfg = Config(
        low_busy_max=0.5,
        high_busy_min=0.5000001,
        period_second_max=30.0,
        period_minute_max=30.000001,
        fft_min_samples=1 << 16,
        fft_max_samples=1 << 16,
        service_latency_buckets=(0.5,),
    )
    assert (cfg.low_busy_max, cfg.fft_min_samples) == (0.5, 1 << 16)


def test_the_issue_example_is_refused():
    """Every pair out of order: the first ordering checked is named."""
    with pytest.raises(ValueError, match="low_busy_max = 0.9, high_busy_min = 0.1"):
        Config(low_busy_max=0.9, high_busy_min=0.1, fft_min_samples=1 << 20, fft_max_samples=16)


@pytest.mark.parametrize(
    "key, below, lowest, highest, above, dispy_name",
    [
        ("node_pulse_seconds", 0.0999, 0.1, 1000.0, 1000.5, "pulse_interval"),
        ("node_ping_seconds", 0.999, 1.0, 1000.0, 1000.5, "ping_interval"),
    ],
)
def test_dispy_timings_stop_at_construction_where_dispy_would_fail(
    key, below, lowest, highest, above, dispy_name
):
    # 1e-300 passed validation, then dispy failed with a raw traceback
    for value in (1e-300, below, above):
        with pytest.raises(
            ValueError, match=rf"{key} = {value}: must be a finite number in \[{lowest}, {highest}\]"
        ):
            Config().replace(**{key: value})
        with pytest.raises(Exception, match=f"Invalid {dispy_name}"):  # dispy's own check, no side effect
            dispy.JobCluster(print, **{dispy_name: value})
    assert getattr(Config().replace(**{key: lowest}), key) == lowest
    assert getattr(Config().replace(**{key: highest}), key) == highest


def test_a_dispy_timing_out_of_range_stops_mosaic_run_with_a_usage_error(tmp_path):
    config = tmp_path / "c.toml"
    config.write_text("[execution]\nnode_pulse_seconds = 1e-300\n")
    command = [MOSAIC, "run", str(tmp_path), "--out", str(tmp_path / "out"), "--config", str(config)]
    done = subprocess.run(command + ["--workers", "1"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert (
        "bad configuration: node_pulse_seconds = 1e-300: must be a finite number in [0.1, 1000.0]"
        in done.stderr
    )
    assert "Traceback" not in done.stderr and not (tmp_path / "out").exists()


def test_bad_toml_value_names_the_key(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('verdict_rule = "ffft"\n')
    with pytest.raises(ValueError, match="verdict_rule = 'ffft'"):
        Config.from_toml(path)


def test_lists_become_tuples_so_config_stays_hashable(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('mounts = ["/scratch"]\n')
    cfg = Config.from_toml(path)
    assert cfg.mounts == ("/scratch",)
    assert hash(cfg)


def test_only_the_method_section_changes_the_results_hash():
    assert (
        Config(
            batch_size=7,
            dispy_port=9800,
            trace_timeout_seconds=5.0,
            service_max_request_bytes=10,
            truth_margin=0.2,
        ).hash()
        == Config().hash()
    )
    assert Config(significant_bytes=2e8).hash() != Config().hash()
    sections = {name: Config().section(name) for name in SECTIONS}
    assert sum(len(s) for s in sections.values()) == len(Config().to_dict())
    assert "verdict_rule" in sections["method"] and "batch_size" in sections["execution"]


def test_the_error_vocabulary_is_public():
    import mosaic
    from mosaic.errors import LogError, Reason

    assert mosaic.LogError is LogError and mosaic.Reason is Reason
    error = mosaic.LogError("too_large", "1 GiB")
    assert error.reason is Reason.TOO_LARGE and str(error) == "too_large: 1 GiB"


def test_malformed_toml_names_the_file(tmp_path):
    path = tmp_path / "thresholds.toml"
    path.write_text("significant_bytes 1e8\n")  # no '='
    with pytest.raises(
        ValueError, match=rf"^{tmp_path}/thresholds.toml: not valid TOML: Expected '=' .*line 1"
    ):
        Config.from_toml(path)
    done = subprocess.run(
        [MOSAIC, "categorize", str(path), "--config", str(path)], capture_output=True, text=True
    )
    assert (
        done.returncode == 2 and f"{path}: not valid TOML" in done.stderr and "Traceback" not in done.stderr
    )


@pytest.mark.parametrize(
    "text, message",
    [
        ("signifcant_bytes = 1\n", "signifcant_bytes (did you mean significant_bytes?)"),
        ("[metod]\nsignificant_bytes = 1\n", "unknown table [metod] (did you mean method?); tables are"),
        # nothing close: no guess
        ("zzz = 1\n", "unknown configuration keys in {path}: zzz\n"),
        ("[zzz]\nstrict = true\n", "unknown table [zzz]; tables are"),
        (
            "[execution]\nbatch_sise = 1\nworkres = 2\n",
            "{path}: batch_sise (did you mean batch_size?), workres\n",
        ),
    ],
)
def test_an_unknown_key_or_table_suggests_the_nearest(tmp_path, text, message):
    path = tmp_path / "c.toml"
    path.write_text(text)
    with pytest.raises(ValueError) as raised:
        Config.from_toml(path)
    assert message.format(path=path) in str(raised.value) + "\n"


def test_a_list_default_is_refused_not_shared_between_instances():
    """A field's list default would be one list every Config shares: defaults are tuples."""
    from mosaic.config import method

    with pytest.raises(ValueError, match="mutable default"):

        @dataclasses.dataclass(frozen=True)
        class Listed:
            prefixes: list[str] = method([])
