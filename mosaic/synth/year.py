"""A Blue-Waters-like year of Darshan logs (``mosaic synth year``), streamed.

Proportions follow what the MOSAIC paper reports for Blue Waters 2019: about
a third of the logs unusable, few distinct (user, application) pairs among
the valid ones (many runs each, heavy-tailed), most applications moving too
little data to matter in either direction, a few per cent periodic writers,
metadata spikes common, and the format mix of the era (mostly Darshan 3.1).

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
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from mosaic.config import Config
from mosaic.synth.catalog import COIN, FEW_RANKS
from mosaic.synth.corpus import Identity, Template, run_scales, truth_record
from mosaic.synth.logs import INVALID_REASONS, YEAR_START, choose_format, make_job
from mosaic.synth.scenarios import MetadataLoad, Periodic, Phase, Range, Scenario, params, resolve

YEAR_SECONDS = 365 * 86_400
INVALID_SHARE = 0.32
UNIQUE_SHARE = 0.08  # groups / valid logs
RUNS_TAIL = 1.2  # Pareto exponent of runs per group (heavy tail)
MAX_GROUP_SHARE = 0.04  # no group holds more than this share of the corpus
TEST_RUN_SHARE, TEST_RUN_SCALE = 0.08, 1e-3
PARTIAL_SHARE = 0.01  # groups whose runs ran out of Darshan record memory (flagged, still valid)
FRESH_INVALID = 0.1  # chance that a broken log gets new records rather than reusing the last
FAST_ZLIB = 1  # zlib level: any level is a valid log; 1 is several times faster than 6
ID_CACHE_LIMIT = 20_000  # record ids remembered across logs (library paths recur)
RANKS = Range(1, 32, integer=True)
WIDE = Range(64, 2048, integer=True)  # the few wide jobs (file per process: many records)
TINY = Range(1e4, 3e7)
LARGE = Range(3e8, 1e11)
RUN = Range(300, 36_000)

# (share of applications, runs weight, scenario): the year's application behaviours.
# Shares follow the paper's single-run view (reads: 85 % insignificant, 9 % on
# start, 2 % steady; writes: 87 % insignificant, 8 % on end, 3 % steady; 2 %
# periodic writers); the runs weight makes applications that move data run
# more often, as the paper's all-runs view shows (heavy I/O dominates executions).
PROFILES = (
    (0.47, 0.25, Scenario("year_tiny", ranks=Range(1, 512, integer=True), run_time=RUN,
                         phases=(Phase("write", Range(0, 0.8, log=False), 0.1, TINY,
                                       shared=COIN),))),
    (0.15, 0.25, Scenario("year_tiny_metadata_spikes", ranks=FEW_RANKS, run_time=RUN,
                         phases=(Phase("write", 0.9, 0.05, TINY, shared=True),),
                         metadata=(MetadataLoad(0.05, 0.5, Range(140, 420),
                                                repeat=Range(6, 30, integer=True),
                                                spacing=Range(5, 60, integer=True)),))),
    (0.01, 0.25, Scenario("year_tiny_wide", ranks=WIDE, run_time=RUN,
                         phases=(Phase("read", 0.0, 0.05, TINY),
                                 Phase("write", 0.95, 0.05, TINY, shared=True)))),
    (0.03, 0.25, Scenario("year_tiny_metadata_density", ranks=FEW_RANKS, run_time=RUN,
                         metadata=(MetadataLoad(0.0, 0.0, Range(60, 300)),))),
    (0.07, 5.0, Scenario("year_read_on_start", ranks=RANKS, run_time=RUN,
                         phases=(Phase("read", 0.0, 0.1, LARGE, shared=COIN),
                                 Phase("write", 0.95, 0.05, TINY, shared=True)))),
    (0.04, 5.0, Scenario("year_read_start_write_end", ranks=RANKS, run_time=RUN,
                         phases=(Phase("read", 0.0, 0.08, LARGE, shared=True),
                                 Phase("write", 0.9, 0.1, LARGE, shared=COIN)))),
    (0.02, 5.0, Scenario("year_read_steady", ranks=RANKS, run_time=RUN,
                         phases=(Phase("read", 0.0, 1.0, LARGE),))),
    (0.04, 4.0, Scenario("year_write_on_end", ranks=RANKS, run_time=RUN,
                         phases=(Phase("write", 0.88, 0.12, LARGE, shared=COIN),))),
    (0.03, 5.0, Scenario("year_write_steady", ranks=RANKS, run_time=RUN,
                         phases=(Phase("write", 0.0, 1.0, LARGE),))),
    (0.03, 5.0, Scenario("year_periodic_writer", ranks=RANKS, run_time=None,
                         phases=(Phase("read", 0.0, 0.02, TINY, shared=True),),
                         periodic=(Periodic("write", Range(120, 1500), Range(0.03, 0.5),
                                            Range(1e8, 2e10), Range(6, 20, integer=True),
                                            jitter=0.05, shared=True),))),
)
INVALID_TEMPLATE = Scenario("year_invalid", ranks=RANKS, run_time=RUN,
                            phases=(Phase("write", 0.5, 0.3, LARGE, shared=True),))
# Share of each eviction reason among invalid logs.
INVALID_MIX = dict(zip(INVALID_REASONS, (0.15, 0.20, 0.15, 0.05, 0.15, 0.30)))
UIDS = (1_000, 60_000)
APPS = ("lmp", "nek5000", "namd2", "gmx_mpi", "cesm.exe", "wrf.exe", "enzo", "chroma",
        "python", "vasp_std", "milc", "qmcpack", "nwchem", "amber", "cp2k.popt", "a.out")


@dataclass
class YearSummary:
    logs: int = 0
    invalid: int = 0
    groups: int = 0
    seconds: float = 0.0  # wall clock
    cpu_seconds: float = 0.0  # this process's CPU time (the machine may be shared)

    def as_dict(self) -> dict:
        return {**self.__dict__,
                "logs_per_second": self.logs / self.seconds if self.seconds else 0.0,
                "logs_per_cpu_second": self.logs / self.cpu_seconds if self.cpu_seconds else 0.0}


class _Writer:
    """Places logs in dated folders (or a day's archive staging folder) and truth lines."""

    def __init__(self, out: Path, archive_days: set[int]):
        self.out, self.archive_days, self.made = out, archive_days, set()
        self.truth = open(out / "truth.jsonl", "w")

    def place(self, day: datetime, stem: str) -> tuple[str, str]:
        """(folder on disk, name in truth) of a log started on ``day``."""
        folder = f"{day:%Y/%m/%d}"
        if (day.timetuple().tm_yday - 1) in self.archive_days:
            return f"{self.out}/{folder}.staging", f"{folder}.tar.gz/{stem}"
        return f"{self.out}/{folder}", f"{folder}/{stem}"

    def write(self, folder: str, stem: str, data: bytes, record: dict) -> None:
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


def _runs_per_group(rng: np.random.Generator, valid: int, groups: int, cap: int,
                    weight: float) -> int:
    """Heavy-tailed runs per group, steered so groups / valid logs stays near UNIQUE_SHARE."""
    if groups > UNIQUE_SHARE * max(valid, 1) + 1:
        return int(min(np.ceil(rng.pareto(RUNS_TAIL) * 8 * weight + 1), cap))
    return 1 if groups < UNIQUE_SHARE * valid - 1 else int(rng.integers(1, 4))


def _identity(rng: np.random.Generator) -> Identity:
    uid = int(rng.integers(*UIDS))
    app = APPS[int(rng.integers(len(APPS)))]
    return Identity(uid, f"u{uid}", f"/u/sciteam/u{uid}/bin/{app}")


def generate_year(out: str | Path, count: int, seed: int = 2019, config: Config | None = None,
                  archive_share: float = 0.05) -> YearSummary:
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
    weights = np.array([w for w, _, _ in PROFILES])
    weights /= weights.sum()
    reasons, reason_p = list(INVALID_MIX), np.array(list(INVALID_MIX.values()))
    cap = max(int(MAX_GROUP_SHARE * count), 1)
    summary, valid, id_cache = YearSummary(), 0, {}
    began, began_cpu = time.perf_counter(), time.process_time()
    job_id, broken = 1_000_000, None
    taken: set[str] = set()  # group keys in use: two groups must not share one (~3 MB a year)
    while summary.logs < count:
        who = _identity(rng)
        if summary.invalid < INVALID_SHARE * (summary.logs + 1):  # keep the share on target
            reason = reasons[rng.choice(len(reasons), p=reason_p)]
            if broken is None or rng.random() < FRESH_INVALID:
                broken = Template(resolve(INVALID_TEMPLATE, rng), rng,
                                  f"/scratch/sciteam/{who.user}", config)
                broken_params = params(broken.scenario)
            # Only the reason differs between broken logs of one template: reuse its records.
            scenario = dataclasses.replace(broken.scenario, invalid=reason,
                                           name=f"year_invalid_{reason}")
            broken.scenario, template, n_runs = scenario, broken, 1
            described = {**broken_params, "name": scenario.name, "invalid": reason}
        else:
            _, runs_weight, profile = PROFILES[rng.choice(len(PROFILES), p=weights)]
            scenario = resolve(profile, rng)
            if rng.random() < PARTIAL_SHARE:
                scenario = dataclasses.replace(scenario, partial=True)
            n_runs = min(_runs_per_group(rng, valid, summary.groups, cap, runs_weight),
                         count - summary.logs)
            while who.group in taken:
                who = _identity(rng)
            taken.add(who.group)
            summary.groups += 1
            template = Template(scenario, rng, f"/scratch/sciteam/{who.user}/{Path(who.exe).name}",
                                config)
            described = params(scenario)
        fmt = choose_format(rng, allow_legacy=scenario.invalid is None, exotic=0.03)
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
            job = make_job(who.uid, job_id, start, run_time, nprocs, f"{who.exe} -i in.{r}", fmt,
                           scenario.partial)
            data, families = template.run(scale, fmt, job, rng, id_cache, level=FAST_ZLIB)
            day = datetime.fromtimestamp(start, timezone.utc)
            stem = (f"{who.user}_{Path(who.exe).name}_id{job_id}_{day.month}-{day.day}-"
                    f"{start % 86_400}-{int(rng.integers(1 << 62))}_1{fmt.suffix}")
            folder, name = writer.place(day, stem)
            writer.write(folder, stem, data, truth_record(
                name, scenario, who, r == heaviest, families,
                {**described, "format": fmt.describe(), "scale": float(scale),
                 "run_time": run_time}))
            summary.logs += 1
        if scenario.invalid:
            summary.invalid += n_runs
        else:
            valid += n_runs
    writer.close()
    summary.seconds = time.perf_counter() - began
    summary.cpu_seconds = time.process_time() - began_cpu
    return summary
