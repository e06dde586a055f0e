"""Write logs and their truth lines: the scenario corpus (``mosaic synth scenarios``).

:func:`generate_runs` turns one resolved scenario into the logs of its runs
(one group; exactly one heaviest) with a truth object each; both the scenario
corpus and the year profile use it.
"""

from __future__ import annotations

import dataclasses
import json
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mosaic.config import Config
from mosaic.darshan import formats as F
from mosaic.darshan.times import module_perf
from mosaic.darshan.writer import HEATMAP_FORMATS, ZLIB_LEVEL
from mosaic.synth import truth
from mosaic.synth.logs import (
    YEAR_START,
    Format,
    choose_format,
    darshan_log,
    invalid_log,
    make_job,
    scaled,
    write,
)
from mosaic.synth.records import add_times
from mosaic.synth.scenarios import Scenario, build, drawn, params, resolve

SCENARIO_UID_BASE, MAX_SEEDS = 20_000, 1_000  # one user per (scenario, seed): one group each
LIGHTER_RUNS = (0.3, 0.8)  # byte scale of the runs that are not the group's heaviest
APPLICATIONS = (
    "lmp",
    "nek5000",
    "namd2",
    "gmx_mpi",
    "cesm.exe",
    "wrf.exe",
    "enzo",
    "chroma",
    "python3",
    "vasp_std",
    "milc",
    "qmcpack",
    "nwchem",
    "ior",
)


@dataclass
class Identity:
    """Who ran a group of runs."""

    uid: int
    user: str
    exe: str

    @property
    def group(self) -> str:
        return f"{self.uid}:{self.exe}"


def identity(rng: np.random.Generator, uid: int) -> Identity:
    user = f"user{uid}"
    app = APPLICATIONS[int(rng.integers(len(APPLICATIONS)))]
    return Identity(uid, user, f"/u/sciteam/{user}/bin/{app}")


@dataclass
class Run:
    """One generated log: where it goes, its bytes, and its truth object."""

    name: str
    data: bytes
    truth: dict[str, Any]


def run_scales(n_runs: int, rng: np.random.Generator) -> np.ndarray:
    """Byte scale per run: 1 for the single heaviest, lighter for the others."""
    scales = rng.uniform(*LIGHTER_RUNS, n_runs)
    scales[int(rng.integers(n_runs))] = 1.0
    return scales


class Template:
    """A resolved scenario built once; the runs of its group differ by byte scale and format."""

    def __init__(
        self, scenario: Scenario, rng: np.random.Generator, root: str, config: Config, times: bool = False
    ):
        """``times``: write the time counters (:func:`~mosaic.synth.records.add_times`)."""
        self.scenario, self.config = scenario, config
        self.built = build(scenario, rng, root)
        self.rows = self.built.table.table()
        if times:
            self.rows = add_times(self.rows, self.built.nprocs, self.scenario.dxt_busy)
            self.built.table.rows = [self.rows]
        self._facts: dict[bool, truth.Facts] = {}
        self._logs: dict[tuple[Any, ...], F.DarshanLog] = {}  # at scale 1, per module versions
        self.last_log: F.DarshanLog | None = None
        self.seed: int | None = None  # the seed it was built from, where its maker keeps one

    def families(self, scale: float, legacy: bool) -> dict[str, Any]:
        if legacy not in self._facts:
            b = self.built
            self._facts[legacy] = truth.facts(
                self.rows,
                b.table.paths,
                b.design,
                b.run_time,
                self.config,
                legacy,
                self.scenario.partial,
                b.heatmap,
            )
        return truth.families(self._facts[legacy], self.config, scale)

    def run(
        self,
        scale: float,
        fmt: Format,
        job: F.Job,
        rng: np.random.Generator,
        id_cache: dict[str, int] | None = None,
        level: int = ZLIB_LEVEL,
    ) -> tuple[bytes, dict[str, Any]]:
        """Bytes of one run and its expected families ({} for an invalid log)."""
        key = (fmt.legacy, fmt.posix, fmt.stdio)
        if key not in self._logs:
            self._logs[key] = dataclasses.replace(
                darshan_log(
                    job,
                    self.built.table,
                    fmt,
                    id_cache,
                    int(drawn(self.scenario.dxt)),
                    self.scenario.dxt_busy,
                ),
                heatmaps=self.built.heatmap,
            )
        log = scaled(self._logs[key], job, scale)
        self.last_log = log
        if self.scenario.invalid:
            return invalid_log(self.scenario.invalid, log, fmt, rng, level), {}
        return write(log, fmt, level), self.families(scale, fmt.legacy)

    def perf(self) -> dict[str, dict[str, float | None]]:
        """darshan-util's per-module totals of the last run written (the truth's ``io``)."""
        log = self.last_log
        if log is None:
            return {}
        return {F.MODULE_NAMES[m]: module_perf(mod) for m, mod in sorted(log.modules.items())}


def generate_runs(
    scenario: Scenario,
    rng: np.random.Generator,
    who: Identity,
    stem: str,
    start: int,
    job_id: int,
    config: Config,
) -> Iterator[Run]:
    """The logs of one resolved scenario's runs (one group), with their truth."""
    n_runs = max(int(drawn(scenario.runs)), 1)
    scales = run_scales(n_runs, rng)
    heaviest = int(np.argmax(scales))
    template = Template(scenario, rng, f"/scratch/sciteam/{who.user}/{Path(who.exe).name}", config)
    run_time, nprocs = template.built.run_time, template.built.nprocs
    described = params(scenario)
    for r, scale in enumerate(scales):
        fmt = choose_format(
            rng,
            allow_legacy=scenario.invalid is None and not scenario.partial,
            versions=HEATMAP_FORMATS if template.built.heatmap else None,
        )
        job = make_job(
            who.uid,
            job_id + r,
            start + r * int(run_time + 600),
            run_time,
            nprocs,
            f"{who.exe} -in input{r}.in",
            fmt,
            scenario.partial,
        )
        data, families = template.run(scale, fmt, job, rng)
        name = f"{stem}_id{job_id + r}_{r + 1}{fmt.suffix}"
        yield Run(
            name,
            data,
            truth_record(
                name,
                scenario,
                who,
                r == heaviest,
                families,
                {**described, "format": fmt.describe(), "scale": float(scale), "run_time": run_time},
            ),
        )


def truth_record(
    name: str,
    scenario: Scenario,
    who: Identity,
    heaviest: bool,
    families: dict[str, Any],
    described: dict[str, Any],
) -> dict[str, Any]:
    """One line of truth.jsonl; ``described``: the scenario's parameters and the run's."""
    valid = scenario.invalid is None
    return {
        "file": name,
        "valid": valid,
        "reason": scenario.invalid,
        "partial": scenario.partial,
        "families": families,
        "group": who.group,
        "heaviest": valid and heaviest,
        "scenario": scenario.name,
        "params": described,
    }


def scenario_rng(name: str, seed: int) -> np.random.Generator:
    """A generator that depends on the scenario's name and the seed only."""
    return np.random.default_rng([seed, zlib.crc32(name.encode())])


def write_scenarios(
    out: str | Path,
    seeds: int = 3,
    config: Config | None = None,
    scenarios: tuple[Scenario, ...] | None = None,
) -> int:
    """Write every scenario x seed under ``out/<scenario>/``, and ``out/truth.jsonl``.

    Returns the number of logs written.
    """
    from mosaic.synth.catalog import SCENARIOS

    if seeds > MAX_SEEDS:
        raise ValueError(f"at most {MAX_SEEDS} seeds (user ids must stay unique)")
    config = config or Config()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = 0
    with open(out / "truth.jsonl", "w") as truth_file:
        for index, scenario in enumerate(scenarios or SCENARIOS):
            (out / scenario.name).mkdir(exist_ok=True)
            for seed in range(seeds):
                rng = scenario_rng(scenario.name, seed)
                concrete = resolve(scenario, rng)
                who = identity(rng, SCENARIO_UID_BASE + index * MAX_SEEDS + seed)
                stem = f"{scenario.name}/{who.user}_{Path(who.exe).name}"
                for run in generate_runs(
                    concrete, rng, who, stem, YEAR_START + seed * 86_400, 1000 * seed + 1, config
                ):
                    (out / run.name).write_bytes(run.data)
                    truth_file.write(json.dumps(run.truth) + "\n")
                    written += 1
    return written
