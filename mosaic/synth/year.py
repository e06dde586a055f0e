"""A Blue-Waters-like year of Darshan logs (``mosaic synth year``), streamed.

Proportions follow what the MOSAIC paper reports for Blue Waters 2019: about
a third of the logs unusable, few distinct (user, application) pairs among
the valid ones (12.5 runs each on average, from 1 to hundreds), the label
shares of Tables II-III and Fig. 4 both per application (single run) and per
execution (all runs), and the format mix of the era (mostly Darshan 3.1).
Log sizes are heavy-tailed: most logs hold a handful of records, a tail of
file-per-process jobs thousands.

Memory stays flat in the number of logs: one group's template is alive at a
time, and archived days are packed at the end from their staging folders.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import tarfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from mosaic.config import Config
from mosaic.synth.catalog import COIN, FEW_RANKS
from mosaic.synth.corpus import Identity, Template, run_scales, truth_record
from mosaic.synth.logs import INVALID_REASONS, YEAR_START, choose_format, make_job
from mosaic.synth.scenarios import MetadataLoad, Periodic, Phase, Range, Scenario, params, resolve

YEAR_SECONDS = 365 * 86_400
INVALID_SHARE = 0.32
RUNS_PER_GROUP = 12.5  # valid logs / groups: the paper's 8 % unique
RUNS_SPREAD = 0.5  # sigma of the log-normal spread of a group's runs around its row's mean
MAX_GROUP_SHARE = 0.04  # no group holds more than this share of the corpus
TEST_RUN_SHARE, TEST_RUN_SCALE = 0.08, 1e-3
PARTIAL_SHARE = 0.01  # groups whose runs ran out of Darshan record memory (flagged, still valid)
FRESH_INVALID = 0.1  # chance that a broken log gets new records rather than reusing the last
FAST_ZLIB = 1  # zlib level: any level is a valid log; 1 is several times faster than 6
ID_CACHE_LIMIT = 20_000  # record ids remembered across logs (library paths recur)
RANKS = Range(1, 32, integer=True)
WIDE = Range(512, 2048, integer=True)  # the tail: file per process, thousands of records
# (their opens alone make metadata spikes: whatever labels they give are in the truth)
TINY = Range(1e4, 3e7)
LARGE = Range(3e8, 1e11)
RUN = Range(300, 36_000)

# Metadata loads (SPEC 3.7 thresholds 250 / 50 req/s): each gives exactly its labels.
SPIKES = MetadataLoad(
    0.05, 0.5, Range(700, 2000), repeat=Range(6, 12, integer=True), spacing=Range(5, 60, integer=True)
)  # high spike + multiple spikes
ONE_SPIKE = MetadataLoad(Range(0.1, 0.9, log=False), 0.5, Range(700, 2000))  # high spike only
DENSE = MetadataLoad(0.0, 0.0, Range(75, 150))  # high density + multiple spikes, no high spike

# (single-run %, all-runs %, scenario): one row per label combination. A row
# is chosen for that share of the groups (single run: the paper's Tables
# II-III), and its groups run RUNS_PER_GROUP x all / single times on average,
# so that it holds the all-runs share of executions (Tables II-III, Fig. 4:
# metadata high spike 60 %, multiple spikes 45.9 %, high density 13 %).
# Reads: insignificant 85 / 27, on start 9 / 38, steady 2 / 30, other 4 / 5;
# writes: insignificant 87 / 47, on end 8 / 14, steady 3 / 37 (the periodic
# writers' bursts fill every quarter), other 2 / 2; periodic writes 2 / 8.
PROFILES = (
    (
        75.0,
        7.1,
        Scenario(
            "year_tiny",
            ranks=RANKS,
            run_time=RUN,
            phases=(Phase("write", Range(0, 0.8, log=False), 0.1, TINY, shared=COIN),),
        ),
    ),
    (
        3.0,
        7.9,
        Scenario(
            "year_tiny_metadata_spikes",
            ranks=FEW_RANKS,
            run_time=RUN,
            phases=(Phase("write", 0.9, 0.05, TINY, shared=True),),
            metadata=(SPIKES,),
        ),
    ),
    (
        3.0,
        23.8,
        Scenario(
            "year_read_on_start",
            ranks=RANKS,
            run_time=RUN,
            phases=(
                Phase("read", 0.0, 0.1, LARGE, shared=COIN),
                Phase("write", 0.95, 0.05, TINY, shared=True),
            ),
            metadata=(SPIKES,),
        ),
    ),
    (
        0.5,
        1.2,
        Scenario(
            "year_read_on_start_wide",
            ranks=WIDE,
            run_time=RUN,
            phases=(Phase("read", 0.0, 0.1, LARGE), Phase("write", 0.95, 0.05, TINY, shared=True)),
        ),
    ),
    (
        0.5,
        1.0,
        Scenario(
            "year_read_on_start_dense",
            ranks=FEW_RANKS,
            run_time=RUN,
            phases=(Phase("read", 0.0, 0.1, LARGE, shared=True),),
            metadata=(DENSE,),
        ),
    ),
    (
        5.0,
        12.0,
        Scenario(
            "year_read_start_write_end",
            ranks=FEW_RANKS,
            run_time=RUN,
            phases=(
                Phase("read", 0.0, 0.08, LARGE, shared=True),
                Phase("write", 0.9, 0.1, LARGE, shared=COIN),
            ),
            metadata=(DENSE,),
        ),
    ),
    (
        0.8,
        25.0,
        Scenario(
            "year_read_write_steady",
            ranks=RANKS,
            run_time=RUN,
            phases=(Phase("read", 0.0, 1.0, LARGE), Phase("write", 0.0, 1.0, LARGE)),
            metadata=(ONE_SPIKE,),
        ),
    ),
    (
        0.2,
        4.0,
        Scenario(
            "year_read_write_steady_quiet",
            ranks=RANKS,
            run_time=RUN,
            phases=(Phase("read", 0.0, 1.0, LARGE), Phase("write", 0.0, 1.0, LARGE)),
        ),
    ),
    (
        1.0,
        1.0,
        Scenario("year_read_steady", ranks=RANKS, run_time=RUN, phases=(Phase("read", 0.0, 1.0, LARGE),)),
    ),
    (
        2.0,
        8.0,
        Scenario(
            "year_periodic_writer",
            ranks=RANKS,
            run_time=None,
            phases=(Phase("read", 0.0, 0.02, TINY, shared=True),),
            periodic=(
                Periodic(
                    "write",
                    Range(120, 1500),
                    Range(0.03, 0.5),
                    Range(1e8, 2e10),
                    Range(24, 48, integer=True),
                    jitter=0.05,
                    shared=True,
                ),
            ),
        ),
    ),
    (
        3.0,
        2.0,
        Scenario(
            "year_write_on_end",
            ranks=RANKS,
            run_time=RUN,
            phases=(Phase("write", 0.88, 0.12, LARGE, shared=COIN),),
        ),
    ),
    (
        4.0,
        5.0,
        Scenario(
            "year_read_middle",
            ranks=RANKS,
            run_time=RUN,
            phases=(Phase("read", 0.3, 0.4, LARGE, shared=COIN),),
        ),
    ),
    (
        2.0,
        2.0,
        Scenario(
            "year_write_middle",
            ranks=RANKS,
            run_time=RUN,
            phases=(Phase("write", 0.3, 0.4, LARGE, shared=COIN),),
        ),
    ),
)
INVALID_TEMPLATE = Scenario(
    "year_invalid", ranks=RANKS, run_time=RUN, phases=(Phase("write", 0.5, 0.3, LARGE, shared=True),)
)
# Share of each eviction reason among invalid logs.
INVALID_MIX = dict(zip(INVALID_REASONS, (0.15, 0.20, 0.15, 0.05, 0.15, 0.30)))
UIDS = (1_000, 60_000)
APPS = (
    "lmp",
    "nek5000",
    "namd2",
    "gmx_mpi",
    "cesm.exe",
    "wrf.exe",
    "enzo",
    "chroma",
    "python",
    "vasp_std",
    "milc",
    "qmcpack",
    "nwchem",
    "amber",
    "cp2k.popt",
    "a.out",
)


@dataclass
class YearSummary:
    logs: int = 0
    invalid: int = 0
    groups: int = 0
    seconds: float = 0.0  # wall clock
    cpu_seconds: float = 0.0  # this process's CPU time (the machine may be shared)

    def as_dict(self) -> dict[str, Any]:
        return {
            **self.__dict__,
            "logs_per_second": self.logs / self.seconds if self.seconds else 0.0,
            "logs_per_cpu_second": self.logs / self.cpu_seconds if self.cpu_seconds else 0.0,
        }


class _Writer:
    """Places logs in dated folders (or a day's archive staging folder) and truth lines."""

    def __init__(self, out: Path, archive_days: set[int]):
        self.out, self.archive_days = out, archive_days
        self.made: set[str] = set()
        self.truth = open(out / "truth.jsonl", "w")

    def place(self, day: datetime, stem: str) -> tuple[str, str]:
        """(folder on disk, name in truth) of a log started on ``day``."""
        folder = f"{day:%Y/%m/%d}"
        if (day.timetuple().tm_yday - 1) in self.archive_days:
            return f"{self.out}/{folder}.staging", f"{folder}.tar.gz/{stem}"
        return f"{self.out}/{folder}", f"{folder}/{stem}"

    def write(self, folder: str, stem: str, data: bytes, record: dict[str, Any]) -> None:
        if folder not in self.made:
            os.makedirs(folder, exist_ok=True)
            self.made.add(folder)
        with open(f"{folder}/{stem}", "wb") as fh:
            fh.write(data)
        self.truth.write(json.dumps(record) + "\n")

    def close(self) -> None:
        self.truth.close()
        for staging in sorted(self.out.glob("*/*/*.staging")):
            with tarfile.open(str(staging)[: -len(".staging")] + ".tar.gz", "w:gz") as tar:
                for member in sorted(staging.iterdir()):
                    tar.add(member, arcname=member.name)
            shutil.rmtree(staging)


def next_profile(chosen: np.ndarray, single: np.ndarray) -> int:
    """The row furthest below its share of the groups so far (deterministic apportionment):
    even a small year holds every row near its share."""
    return int(np.argmax(single * (chosen.sum() + 1) - chosen))


def group_runs(rng: np.random.Generator, owed: float, cap: int) -> int:
    """Runs of one group: 1 plus a log-normal spread of the runs its row still owes.

    ``owed``: the row's mean runs x its groups so far, minus the runs it got;
    paying what is owed keeps even a small year's all-runs shares on target.
    """
    spread = np.exp(RUNS_SPREAD * rng.standard_normal() - RUNS_SPREAD**2 / 2)
    return int(min(1 + np.floor(max(owed - 1, 0) * spread + rng.random()), cap))


def _identity(rng: np.random.Generator) -> Identity:
    uid = int(rng.integers(*UIDS))
    app = APPS[int(rng.integers(len(APPS)))]
    return Identity(uid, f"u{uid}", f"/u/sciteam/u{uid}/bin/{app}")


def generate_year(
    out: str | Path, count: int, seed: int = 2019, config: Config | None = None, archive_share: float = 0.05
) -> YearSummary:
    """Write ``count`` logs under ``out/2019/MM/DD/`` plus ``out/truth.jsonl``.

    ``archive_share`` of the days are shipped as ``2019/MM/DD.tar.gz`` (truth
    names their logs ``ARCHIVE/MEMBER``).
    """
    config = config or Config()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    archive_days = set(np.flatnonzero(rng.random(365) < archive_share).tolist())
    writer = _Writer(out, archive_days)
    single = np.array([row[0] for row in PROFILES]) / 100
    mean_runs = RUNS_PER_GROUP * np.array([row[1] for row in PROFILES]) / 100 / single
    chosen, runs_given = np.zeros(len(PROFILES)), np.zeros(len(PROFILES))
    reasons, reason_p = list(INVALID_MIX), np.array(list(INVALID_MIX.values()))
    cap = max(int(MAX_GROUP_SHARE * count), 1)
    summary = YearSummary()
    id_cache: dict[str, int] = {}
    began, began_cpu = time.perf_counter(), time.process_time()
    job_id, broken = 1_000_000, None
    taken: set[str] = set()  # group keys in use: two groups must not share one (~3 MB a year)
    while summary.logs < count:
        who = _identity(rng)
        if summary.invalid < INVALID_SHARE * (summary.logs + 1):  # keep the share on target
            reason = reasons[rng.choice(len(reasons), p=reason_p)]
            if broken is None or rng.random() < FRESH_INVALID:
                broken = Template(resolve(INVALID_TEMPLATE, rng), rng, f"/scratch/sciteam/{who.user}", config)
                broken_params = params(broken.scenario)
            # Only the reason differs between broken logs of one template: reuse its records.
            scenario = dataclasses.replace(broken.scenario, invalid=reason, name=f"year_invalid_{reason}")
            broken.scenario, template, n_runs = scenario, broken, 1
            described = {**broken_params, "name": scenario.name, "invalid": reason}
        else:
            row = next_profile(chosen, single)
            chosen[row] += 1
            scenario = resolve(PROFILES[row][2], rng)
            if rng.random() < PARTIAL_SHARE:
                scenario = dataclasses.replace(scenario, partial=True)
            owed = mean_runs[row] * chosen[row] - runs_given[row]
            n_runs = min(group_runs(rng, owed, cap), count - summary.logs)
            runs_given[row] += n_runs
            while who.group in taken:
                who = _identity(rng)
            taken.add(who.group)
            summary.groups += 1
            # Time counters only in valid logs: breaking a log draws on its size, and the
            # year's other draws must stay those of the years before time counters.
            template = Template(
                scenario, rng, f"/scratch/sciteam/{who.user}/{Path(who.exe).name}", config, times=True
            )
            described = params(scenario)
        fmt = choose_format(
            rng, allow_legacy=scenario.invalid is None and not scenario.partial, exotic=0.03
        )  # 2.x has no partial flag
        scales = run_scales(n_runs, rng)
        # A few runs are short tests that move almost nothing: the group's
        # categories hold for most runs, not all (paper: 80-97 %).
        scales[(rng.random(n_runs) < TEST_RUN_SHARE) & (scales < 1)] *= TEST_RUN_SCALE
        heaviest = int(np.argmax(scales))
        run_time, nprocs = template.built.run_time, template.built.nprocs
        if len(id_cache) > ID_CACHE_LIMIT:
            id_cache.clear()
        for r, scale in enumerate(scales):
            start = YEAR_START + int(rng.integers(0, YEAR_SECONDS - int(run_time) - 1))
            job_id += 1
            job = make_job(
                who.uid, job_id, start, run_time, nprocs, f"{who.exe} -i in.{r}", fmt, scenario.partial
            )
            data, families = template.run(scale, fmt, job, rng, id_cache, level=FAST_ZLIB)
            day = datetime.fromtimestamp(start, UTC)
            stem = (
                f"{who.user}_{Path(who.exe).name}_id{job_id}_{day.month}-{day.day}-"
                f"{start % 86_400}-{int(rng.integers(1 << 62))}_1{fmt.suffix}"
            )
            folder, name = writer.place(day, stem)
            record = truth_record(
                name,
                scenario,
                who,
                r == heaviest,
                families,
                {**described, "format": fmt.describe(), "scale": float(scale), "run_time": run_time},
            )
            if scenario.invalid is None:  # darshan-util's totals of what was written (time counters)
                record["io"] = template.perf()
            writer.write(folder, stem, data, record)
            summary.logs += 1
        if scenario.invalid:
            summary.invalid += n_runs
    writer.close()
    summary.seconds = time.perf_counter() - began
    summary.cpu_seconds = time.process_time() - began_cpu
    return summary
