"""`mosaic categorize` runs under the memory bound of batch and service workers,
and its exit status says whether every log was categorized.

A real process each time: the bound (RLIMIT_AS) is set on the command's own
process, which must never be the test process.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from mosaic import __version__
from mosaic.config import Config
from mosaic_testing.written import heatmap_log

MOSAIC = Path(sys.executable).with_name("mosaic")
MB = 1 << 20


def test_a_log_past_the_memory_bound_is_too_large(tmp_path):
    """4 M bins: a 64 MB region, ~200 MB more to categorize (measured 360 MB peak in all),
    under a 128 MB bound; a 4-bin log under the same bound is categorized."""
    config = tmp_path / "bound.toml"
    config.write_text(f"worker_memory_bytes = {128 * MB}\n")
    heavy, light = tmp_path / "heavy.darshan", tmp_path / "light.darshan"
    heavy.write_bytes(heatmap_log(4_000_000))
    light.write_bytes(heatmap_log(4))
    assert heavy.stat().st_size < MB
    out = subprocess.run(
        [str(MOSAIC), "categorize", str(heavy), str(light), "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 1, out.stderr  # the evicted log
    heavy_result, light_result = map(json.loads, out.stdout.splitlines())
    assert (heavy_result["status"], heavy_result["reason"]) == ("evicted", "too_large")
    assert light_result["status"] == "ok" and light_result["write"]["bytes"] == 1 << 20


def categorize(*paths: Path) -> tuple[int, list[dict]]:
    done = subprocess.run(
        [str(MOSAIC), "categorize", *map(str, paths)], capture_output=True, text=True, timeout=120
    )
    return done.returncode, [json.loads(line) for line in done.stdout.splitlines()]


def test_the_exit_status_is_1_when_any_log_is_evicted_and_every_log_is_printed(tmp_path):
    good, truncated = tmp_path / "good.darshan", tmp_path / "truncated.darshan"
    good.write_bytes(heatmap_log(4))
    truncated.write_bytes(heatmap_log(4)[:100])
    status, results = categorize(good)
    assert status == 0 and [r["status"] for r in results] == ["ok"]
    status, results = categorize(good, truncated, tmp_path / "missing.darshan", good)
    assert status == 1
    assert [r["status"] for r in results] == ["ok", "evicted", "evicted", "ok"]
    assert results[2]["reason"] == "unreadable"
    status, results = categorize(tmp_path / "missing.darshan")
    assert status == 1 and len(results) == 1


def test_every_object_names_the_version_and_configuration_that_made_it(tmp_path):
    """As traces.jsonl and evicted.jsonl lines do (docs/release.md): an ok and an evicted
    log alike, and another configuration gives another hash."""
    good = tmp_path / "good.darshan"
    good.write_bytes(heatmap_log(4))
    _, results = categorize(good, tmp_path / "missing.darshan")
    assert [(r["status"], r["mosaic_version"], r["config_hash"]) for r in results] == [
        ("ok", __version__, Config().hash()),
        ("evicted", __version__, Config().hash()),
    ]
    config = tmp_path / "share.toml"
    config.write_text("periodic_segment_share = 0.7\n")
    done = subprocess.run(
        [str(MOSAIC), "categorize", str(good), "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (
        json.loads(done.stdout)["config_hash"] == Config(periodic_segment_share=0.7).hash() != Config().hash()
    )
