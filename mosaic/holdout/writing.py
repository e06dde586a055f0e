"""Logs on disk: formats, adversarial extras, and :func:`generate` (logs + truth.jsonl)."""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mosaic.config import Config
from mosaic.darshan import formats as F
from mosaic.darshan import writer
from mosaic.holdout.design import EPOCH, MB, MOUNTS, ZLIB_LEVEL, Design, Records
from mosaic.holdout.scenarios import SCENARIOS, latest_timestamp
from mosaic.holdout.truth import truth_families


@dataclass(frozen=True)
class LogFormat:
    version: str  # "3.41", "3.21", "3.10", or a 2.x legacy version
    big_endian: bool = False
    compression: str = "zlib"  # 3.x: zlib / bzip2 / none; 2.x: none / gzip / bzip2
    streams: int = 1
    posix_version: int = 4
    stdio_version: int = 2

    @property
    def legacy(self) -> bool:
        return self.version in writer.LEGACY_WRITABLE

    @property
    def suffix(self) -> str:
        return (
            {"gzip": ".darshan.gz", "bzip2": ".darshan.bz2"}.get(self.compression, ".darshan")
            if self.legacy
            else ".darshan"
        )

    def run_time(self, designed: float) -> float:
        """Older formats keep whole seconds and count end - start + 1 (SPEC 2)."""
        return designed if self.version == "3.41" else float(math.ceil(designed))


def pick_format(rng: np.random.Generator, design: Design) -> LogFormat:
    if design.heatmap is not None:  # Darshan 3.3 and later
        return LogFormat(
            str(rng.choice(writer.HEATMAP_FORMATS)),
            big_endian=bool(rng.random() < 0.25),
            compression=str(rng.choice(["zlib", "bzip2", "none"])),
        )
    if design.params.get("force_legacy") or (design.posix_only and rng.random() < 0.1):
        return LogFormat(
            str(rng.choice(writer.LEGACY_WRITABLE)), compression=str(rng.choice(["none", "gzip", "bzip2"]))
        )
    version = str(rng.choice(["3.41", "3.21", "3.10"], p=[0.5, 0.25, 0.25]))
    old = version == "3.10"
    return LogFormat(
        version,
        big_endian=bool(rng.random() < 0.25),
        compression=str(rng.choice(["zlib", "bzip2", "none"], p=[0.6, 0.25, 0.15])),
        streams=int(rng.choice([1, 1, 4, 16])),
        posix_version=int(rng.choice([3, 4])) if old else 4,
        stdio_version=int(rng.choice([1, 2])) if old else 2,
    )


def as_legacy(records: Records) -> Records:
    """What a 2.x log can hold: POSIX records whose traffic spans open..close."""
    table = records.table()
    posix = table["stdio"] == 0
    out = Records()
    span_start, span_end = table["open_start"][posix], table["close_end"][posix]
    out.add(
        list(table["path"][posix]),
        table["rank"][posix],
        read=(span_start, span_end, table["bytes_read"][posix]),
        write=(span_start, span_end, table["bytes_written"][posix]),
        opens=table["opens"][posix],
        seeks=table["seeks"][posix],
        open_window=(span_start, span_start),
        close_window=(span_end, span_end),
    )
    return out


def module_records(table: dict[str, Any], rows: np.ndarray, module: int, version: int) -> F.ModuleRecords:
    """Records of one module with every canonical counter of SPEC 2 filled in."""
    n_c, n_f = F.RECORD_SHAPES[(module, version)]
    cidx, fidx = F.CANONICAL_INDEX[(module, version)]
    counters = np.zeros((int(rows.sum()), n_c), np.int64)
    fcounters = np.zeros((int(rows.sum()), n_f), np.float64)
    for name in ("opens", "seeks", "bytes_read", "bytes_written"):
        counters[:, cidx[name]] = table[name][rows]
    counters[:, cidx["reads"]] = np.ceil(table["bytes_read"][rows] / MB)
    counters[:, cidx["writes"]] = np.ceil(table["bytes_written"][rows] / MB)
    for name in F.CANONICAL_FCOUNTERS:
        fcounters[:, fidx[name]] = table[name][rows]
    return F.ModuleRecords(
        module, version, table["id"][rows], table["rank"][rows].astype(np.int64), counters, fcounters
    )


def dxt_segments(records: Records) -> F.DxtSegments | None:
    if not records.dxt:
        return None
    parts = records.dxt
    sizes = [len(p["starts"]) for p in parts]
    lengths = np.concatenate([p["lengths"] for p in parts]).astype(np.int64)
    offsets = np.concatenate([np.cumsum(p["lengths"]) - p["lengths"] for p in parts])
    return F.DxtSegments(
        ids=np.repeat(writer.darshan_hash([p["path"] for p in parts]), sizes),
        ranks=np.repeat([p["rank"] for p in parts], sizes).astype(np.int64),
        is_write=np.repeat([p["is_write"] for p in parts], sizes).astype(bool),
        offsets=offsets.astype(np.int64),
        lengths=lengths,
        starts=np.concatenate([p["starts"] for p in parts]),
        ends=np.concatenate([p["ends"] for p in parts]),
    )


MPIIO_VERSION = 3
MPIIO_BYTES = dict(bytes_read=14, bytes_written=15)  # MPIIO_BYTES_READ / _WRITTEN
MPIIO_OPENS = 1  # MPIIO_COLL_OPENS


def mpiio_mirror(table: dict[str, Any], rows: np.ndarray) -> F.ModuleRecords:
    """MPI-IO records repeating POSIX traffic, as collective I/O leaves them (SPEC 2: ignored)."""
    n_c, n_f = F.RECORD_SHAPES[(F.MPIIO, MPIIO_VERSION)]
    counters = np.zeros((int(rows.sum()), n_c), np.int64)
    fcounters = np.zeros((int(rows.sum()), n_f), np.float64)
    counters[:, MPIIO_OPENS] = table["opens"][rows]
    for name, index in MPIIO_BYTES.items():
        counters[:, index] = table[name][rows]
    for name, index in F.CANONICAL_INDEX[(F.POSIX, 4)][1].items():
        fcounters[:, index] = table[name][rows]
    return F.ModuleRecords(
        F.MPIIO, MPIIO_VERSION, table["id"][rows], table["rank"][rows].astype(np.int64), counters, fcounters
    )


def broken_records(run_time: float, config: Config) -> Records:
    """Records SPEC 3.1 drops: inverted timestamps, and traffic far past the run's end."""
    late = run_time * (1 + 5 * config.clock_slack_fraction) + 5 * config.clock_slack_seconds
    records = Records()
    records.add("/scratch/run/inverted.dat", 0, write=(0.6 * run_time, 0.2 * run_time, 1e12))
    records.add(
        "/scratch/run/future.dat", 0, read=(late, late + 10, 1e12), opens=5000, open_window=(late, late)
    )
    return records


@dataclass(frozen=True)
class Extras:
    """Adversarial additions that must not change any label."""

    mpiio: bool = False
    broken: bool = False
    partial: bool = False
    start_fraction: float = 0.0  # 3.41 keeps nanoseconds of the start time


def pick_extras(rng: np.random.Generator, fmt: LogFormat) -> Extras:
    if fmt.legacy:
        return Extras(broken=bool(rng.random() < 0.3))
    return Extras(
        mpiio=bool(rng.random() < 0.3),
        broken=bool(rng.random() < 0.3),
        partial=bool(rng.random() < 0.1),
        start_fraction=float(rng.uniform(0, 1)) if fmt.version == "3.41" else 0.0,
    )


def log_bytes(design: Design, fmt: LogFormat, extras: Extras, uid: int, exe: str, config: Config) -> bytes:
    table = design.records.table()
    if extras.broken:
        broken = broken_records(design.run_time, config).table()
        table = {k: np.concatenate([table[k], broken[k]]) for k in table}
    paths, inverse = np.unique(table["path"].astype(str), return_inverse=True)
    path_ids = writer.darshan_hash(list(paths))
    table["id"] = path_ids[inverse.ravel()]
    run_time = design.run_time
    start = EPOCH + extras.start_fraction
    end = start + run_time if fmt.version == "3.41" else start + run_time - 1
    job = F.Job(
        uid=uid,
        job_id=uid,
        start=float(start),
        end=float(end),
        run_time=run_time,
        nprocs=design.nprocs,
        cmdline=f"{exe} -i input.deck",
        mounts=MOUNTS,
        metadata={"lib_ver": "3.4.0", "h": "romio_no_indep_rw=true"},
        version=fmt.version,
        partial=extras.partial,
    )
    stdio, lost = table["stdio"] > 0, table["lost"] > 0
    posix = ~stdio & ~lost
    modules = {}
    if posix.any():
        modules[F.POSIX] = module_records(table, posix, F.POSIX, fmt.posix_version)
    if lost.any() or (extras.mpiio and posix.any()):
        modules[F.MPIIO] = mpiio_mirror(table, lost | (posix & extras.mpiio))
    if stdio.any():
        modules[F.STDIO] = module_records(table, stdio, F.STDIO, fmt.stdio_version)
    names = dict(zip(path_ids.tolist(), paths.tolist()))
    log = F.DarshanLog(job, names, modules, dxt_segments(design.records), heatmaps=design.heatmap)
    if fmt.legacy:
        return writer.write_legacy_log(log, fmt.version, fmt.compression, ZLIB_LEVEL)
    return writer.write_log(
        log,
        fmt.version,
        fmt.big_endian,
        fmt.compression,
        min(fmt.streams, max(design.nprocs, 1)),
        level=ZLIB_LEVEL,
    )


def generate(
    out: str | Path, seeds: int, scenarios: list[str] | None = None, config: Config | None = None
) -> list[dict[str, Any]]:
    """Write ``seeds`` logs per scenario under ``out`` and their truth to ``out/truth.jsonl``."""
    config = config or Config()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    truth = []
    for index, name in enumerate(scenarios or SCENARIOS):
        for seed in range(seeds):
            rng = np.random.default_rng([index, seed, 20261122])
            design = SCENARIOS[name](rng, config)
            if latest_timestamp(design.records) > design.run_time:
                raise ValueError(f"{name} seed {seed}: traffic after the end of the run")
            fmt = pick_format(rng, design)
            if fmt.legacy:
                design.records = as_legacy(design.records)
            design.run_time = fmt.run_time(design.run_time)
            uid = 10000 + 1000 * index + seed
            exe = f"/sw/{name}/bin/app{seed}"
            file = f"{name}/{name}_s{seed:03d}{fmt.suffix}"
            (out / file).parent.mkdir(parents=True, exist_ok=True)
            extras = pick_extras(rng, fmt)
            if design.params.get("partial"):
                extras = dataclasses.replace(extras, partial=True)
            (out / file).write_bytes(log_bytes(design, fmt, extras, uid, exe, config))
            params = {k: _plain(v) for k, v in design.params.items()}
            params.update(
                format=fmt.version,
                big_endian=fmt.big_endian,
                compression=fmt.compression,
                streams=fmt.streams,
                run_time=design.run_time,
                **dataclasses.asdict(extras),
            )
            truth.append(
                {
                    "file": file,
                    "valid": True,
                    "reason": None,
                    "partial": extras.partial,
                    "families": truth_families(design, config, fmt.legacy),
                    "group": f"{uid}:{exe}",
                    "heaviest": True,
                    "scenario": name,
                    "params": params,
                }
            )
    with open(out / "truth.jsonl", "w") as fh:
        fh.writelines(json.dumps(t) + "\n" for t in truth)
    return truth


def _plain(value: object) -> object:
    return value.item() if isinstance(value, np.generic) else value
