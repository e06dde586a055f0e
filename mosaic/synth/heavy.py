"""Heavy logs with ground truth (``mosaic synth heavy``): what large centers produce.

Jobs of 512 to 16,384 ranks with hundreds to thousands of records per log:
checkpoints written file per process (one record per rank per file) or to
shared files kept per writing rank (one record per aggregator, not rank -1),
periodic and not, a third of the logs with DXT_POSIX segments. The year
profile's logs are small; benchmarks of per-trace cost use these.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from mosaic.config import Config
from mosaic.synth.catalog import BIG
from mosaic.synth.corpus import generate_runs, identity, scenario_rng
from mosaic.synth.logs import YEAR_START
from mosaic.synth.records import DXT_REQUESTS
from mosaic.synth.scenarios import Irregular, Periodic, Phase, Range, Scenario, resolve

HEAVY_UID_BASE = 40_000  # one user per log: one group each
DXT_SHARE = 1 / 3  # logs that also carry DXT_POSIX segments
FPP_RANKS = Range(512, 1536, integer=True)  # file per process: ranks x files records
WIDE_RANKS = Range(512, 16_384, integer=True)
WRITERS = Range(64, 512, integer=True)  # aggregators writing a shared file
CHECKPOINT = Range(2e10, 5e11)  # bytes of one checkpoint, all ranks together

HEAVY_SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "heavy_fpp_checkpoints",
        ranks=FPP_RANKS,
        run_time=None,
        phases=(Phase("read", 0.0, 0.02, BIG, shared=True, writers=WRITERS),),
        periodic=(
            Periodic(
                "write",
                Range(300, 1500),
                Range(0.05, 0.2),
                CHECKPOINT,
                Range(4, 6, integer=True),
                shared=False,
            ),
        ),
    ),
    Scenario(
        "heavy_shared_checkpoints",
        ranks=WIDE_RANKS,
        run_time=None,
        phases=(Phase("read", 0.0, 0.02, BIG, shared=True, writers=WRITERS),),
        periodic=(
            Periodic(
                "write",
                Range(120, 3600),
                Range(0.05, 0.5),
                CHECKPOINT,
                Range(6, 16, integer=True),
                writers=WRITERS,
            ),
        ),
    ),
    Scenario(
        "heavy_fpp_restart_and_results",
        ranks=Range(512, 4096, integer=True),
        run_time=Range(3600, 43_200),
        phases=(Phase("read", 0.0, 0.05, CHECKPOINT), Phase("write", 0.9, 0.1, CHECKPOINT)),
    ),
    Scenario(
        "heavy_shared_steady",
        ranks=WIDE_RANKS,
        run_time=Range(3600, 43_200),
        phases=(
            Phase("read", 0.0, 0.05, BIG, shared=True, writers=WRITERS),
            Phase("write", 0.0, 1.0, CHECKPOINT, shared=True, writers=Range(512, 4096, integer=True)),
        ),
    ),
    Scenario(
        "heavy_irregular_dumps",
        ranks=WIDE_RANKS,
        run_time=Range(7200, 86_400),
        phases=(Phase("read", 0.0, 0.03, CHECKPOINT, shared=True, writers=Range(256, 2048, integer=True)),),
        irregular=(Irregular("write", Range(6, 40, integer=True), (1e9, 1e11), (5, 300)),),
    ),
)


def generate_heavy(out: str | Path, count: int, seed: int = 0, config: Config | None = None) -> int:
    """Write ``count`` heavy logs under ``out/<scenario>/`` and ``out/truth.jsonl``.

    Scenarios take turns; each log is its own (user, application) group.
    Returns the number of logs written.
    """
    config = config or Config()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "truth.jsonl", "w") as truth_file:
        for i in range(count):
            profile = HEAVY_SCENARIOS[i % len(HEAVY_SCENARIOS)]
            rng = scenario_rng(profile.name, seed * 1_000_003 + i)
            traced = DXT_REQUESTS if rng.random() < DXT_SHARE else 0
            scenario = dataclasses.replace(resolve(profile, rng), dxt=traced)
            who = identity(rng, HEAVY_UID_BASE + i)
            (out / scenario.name).mkdir(exist_ok=True)
            stem = f"{scenario.name}/{who.user}_{Path(who.exe).name}"
            for run in generate_runs(scenario, rng, who, stem, YEAR_START + i * 600, 1_000 * i + 1, config):
                (out / run.name).write_bytes(run.data)
                truth_file.write(json.dumps(run.truth) + "\n")
    return count
