"""Write logs and their truth lines: the scenario corpus (``mosaic synth scenarios``).

:func:`generate_runs` turns one resolved scenario into the logs of its runs
(one group; exactly one heaviest) with a truth object each; both the scenario
corpus and the year profile use it.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mosaic.config import Config
from mosaic.synth import truth
from mosaic.synth.logs import YEAR_START, Format, choose_format, invalid_log, make_job, serialize
from mosaic.synth.records import FileTable
from mosaic.synth.scenarios import Built, Scenario, build, params, resolve

SCENARIO_UID_BASE, MAX_SEEDS = 20_000, 1_000  # one user per (scenario, seed): one group each
LIGHTER_RUNS = (0.3, 0.8)  # byte scale of the runs that are not the group's heaviest
APPLICATIONS = ("lmp", "nek5000", "namd2", "gmx_mpi", "cesm.exe", "wrf.exe", "enzo",
                "chroma", "python3", "vasp_std", "milc", "qmcpack", "nwchem", "ior")


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
    truth: dict


def run_scales(n_runs: int, rng: np.random.Generator) -> np.ndarray:
    """Byte scale per run: 1 for the single heaviest, lighter for the others."""
    scales = rng.uniform(*LIGHTER_RUNS, n_runs)
    scales[int(rng.integers(n_runs))] = 1.0
    return scales


def total_bytes(table: FileTable, paths: list[str], config: Config, legacy: bool) -> int:
    """Total bytes deduplication weighs a run by (the filtered records, SPEC 2)."""
    rows = table.table()
    rows = truth.kept_rows(truth.legacy_view(rows) if legacy else rows, paths, config)
    return int(rows["bytes_read"].sum() + rows["bytes_written"].sum())


def generate_runs(scenario: Scenario, rng: np.random.Generator, who: Identity, stem: str,
                  start: int, job_id: int, config: Config, fmt: Format | None = None,
                  id_cache: dict | None = None) -> Iterator[Run]:
    """The logs of one resolved scenario's runs, with their truth."""
    n_runs = max(int(scenario.runs), 1)
    scales = run_scales(n_runs, rng)
    heaviest = int(np.argmax(scales))
    for r, scale in enumerate(scales):
        run_fmt = fmt or choose_format(rng, allow_legacy=scenario.invalid is None
                                       and not scenario.partial)
        built = build(scenario, rng, f"/scratch/sciteam/{who.user}/run{job_id + r}", scale)
        job = make_job(who.uid, job_id + r, start + r * int(built.run_time + 600),
                       built.run_time, built.nprocs, f"{who.exe} -in input{r}.in", run_fmt,
                       scenario.partial)
        name = f"{stem}_id{job_id + r}_{r + 1}{run_fmt.suffix}"
        record = {"file": name, "valid": scenario.invalid is None, "reason": scenario.invalid,
                  "partial": scenario.partial, "families": {}, "group": who.group,
                  "heaviest": scenario.invalid is None and r == heaviest,
                  "scenario": scenario.name,
                  "params": {**params(scenario), "format": run_fmt.describe(),
                             "scale": float(scale), "run_time": built.run_time}}
        if scenario.invalid:
            data = invalid_log(scenario.invalid, job, built.table, run_fmt, rng)
        else:
            data = serialize(job, built.table, run_fmt, id_cache)
            record["families"] = expected_families(built, config, run_fmt.legacy)
        yield Run(name, data, record)


def expected_families(built: Built, config: Config, legacy: bool) -> dict:
    return truth.expected(built.table.table(), built.table.paths, built.design,
                          built.run_time, config, legacy)


def scenario_rng(name: str, seed: int) -> np.random.Generator:
    """A generator that depends on the scenario's name and the seed only."""
    return np.random.default_rng([seed, zlib.crc32(name.encode())])


def write_scenarios(out: str | Path, seeds: int = 3, config: Config | None = None,
                    scenarios: tuple[Scenario, ...] | None = None) -> int:
    """Write every scenario x seed under ``out/<scenario>/`` and ``out/truth.jsonl``; returns logs written."""
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
                for run in generate_runs(concrete, rng, who, stem, YEAR_START + seed * 86_400,
                                         1000 * seed + 1, config):
                    (out / run.name).write_bytes(run.data)
                    truth_file.write(json.dumps(run.truth) + "\n")
                    written += 1
    return written

