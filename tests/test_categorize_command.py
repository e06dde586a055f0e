"""`mosaic categorize` runs under the memory bound of batch and service workers (issue 25 item 10).

A real process each time: the bound (RLIMIT_AS) is set on the command's own
process, which must never be the test process.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
        check=True,
        timeout=120,
    ).stdout
    heavy_result, light_result = map(json.loads, out.splitlines())
    assert (heavy_result["status"], heavy_result["reason"]) == ("evicted", "too_large")
    assert light_result["status"] == "ok" and light_result["write"]["bytes"] == 1 << 20
