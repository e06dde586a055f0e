"""`mosaic run` options reach the configuration; bad options are refused."""

import json
import os

from click.testing import CliRunner

from mosaic.cli import main


def test_options_override_the_config_file(shared_logs, tmp_path):
    config = tmp_path / "c.toml"
    config.write_text("batch_size = 3\nsignificant_bytes = 5e7\ngroup_by = 'app'\n")
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main,
        [
            "run",
            str(shared_logs[0]),
            str(shared_logs[1]),
            "--out",
            str(out),
            "--workers",
            "0",
            "--quiet",
            "--config",
            str(config),
            "--group-by",
            "cmdline",
            "--all-runs",
            "--strict",
            "--mount",
            "/scratch",
            "--mount",
            "/home",
            "--timeout",
            "7.5",
        ],
    )
    assert result.exit_code == 0, result.output
    assert result.output == ""  # --quiet
    summary = json.loads((out / "summary.json").read_text())
    used = summary["config"]
    assert (used["batch_size"], used["significant_bytes"]) == (3, 5e7)  # from the file
    assert (used["group_by"], used["all_runs"], used["strict"]) == ("cmdline", True, True)
    assert (used["mounts"], used["trace_timeout_seconds"]) == (["/scratch", "/home"], 7.5)
    assert summary["funnel"]["logs"] == 2 and summary["stability"] is not None


def test_more_workers_than_cpus_and_missing_out_are_refused(shared_logs, tmp_path):
    too_many = str((os.cpu_count() or 1) + 1)
    result = CliRunner().invoke(
        main, ["run", str(shared_logs[0]), "--out", str(tmp_path), "--workers", too_many]
    )
    assert result.exit_code == 2 and "--workers" in result.output
    result = CliRunner().invoke(main, ["run", str(shared_logs[0])])
    assert result.exit_code == 2 and "--out" in result.output
    assert not (tmp_path / "summary.json").exists()
