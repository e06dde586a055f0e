"""A store seeded by hand with the contract tables the forecast reads (signatures, running_jobs,
app_contention, run_load) and the applications they name, as their owning branches will fill
them; and a signature body (docs/method.md 3.12) from series."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from mosaic.corpus.store import Store
from mosaic.forecast_store import CONTRACT_TABLES
from mosaic_testing.ports import free_port

MOSAIC = Path(sys.executable).with_name("mosaic")
RUNNING_COLUMNS = (
    "job_id, uid, application, group_key, start_epoch, time_limit, nodes, tasks, state, ended_epoch, updated"
)


def signature_body(
    read: Sequence[float],
    write: Sequence[float],
    run_time: float,
    bursts: list[dict[str, Any]] | None = None,
    runs: int = 8,
    resolution: float = 0.1,
    spread: tuple[Sequence[float], Sequence[float], Sequence[float], Sequence[float]] | None = None,
) -> dict[str, Any]:
    """A signature body (docs/method.md 3.12): p50 = the series given (p10, p90 = ``spread`` or the same)."""
    r10, r90, w10, w90 = spread or (read, read, write, write)
    return {
        "runs": runs,
        "resolution": resolution,
        "run_time": {"p10": run_time, "p50": run_time, "p90": run_time},
        "normalized": {
            "points": len(read),
            "read": {
                "p10": list(map(float, r10)),
                "p50": list(map(float, read)),
                "p90": list(map(float, r90)),
            },
            "write": {
                "p10": list(map(float, w10)),
                "p50": list(map(float, write)),
                "p90": list(map(float, w90)),
            },
        },
        "bursts": bursts or [],
    }


def seed_store(
    path: Path,
    applications: Iterable[tuple[int, str, int]] = (),
    signatures: Iterable[tuple[str, dict[str, Any] | str]] = (),
    running: Iterable[tuple[Any, ...]] = (),
    contention: Iterable[tuple[str, str, float | None]] = (),
    run_loads: Iterable[tuple[str, str, float]] = (),
    run_times: Iterable[tuple[str, float]] = (),
    tables: bool = True,
) -> Path:
    """A store at ``path`` with:

    - ``applications``: (uid, application, runs);
    - ``signatures``: (group_key, body dict, or raw text for a damaged one);
    - ``running``: (job_id, uid, application, start_epoch, time_limit or None[, ended_epoch]);
    - ``contention``: (group_key, label, slope);
    - ``run_loads``: (group_key, fs, io_seconds): one stored run of the group on fs;
    - ``run_times``: (group_key, run_time): stored runs with that run time.

    ``tables=False``: none of the contract tables (a store before the other branches).
    """
    Store(path).close()
    db = sqlite3.connect(path)
    try:
        if tables:
            db.executescript(CONTRACT_TABLES)
        db.executemany(
            "INSERT OR REPLACE INTO applications (group_key, uid, application, runs, last_seen, "
            "representative, total_bytes, run_time, categories) VALUES (?, ?, ?, ?, '', '', 0, 0, '[]')",
            [(f"{uid}:{app}", uid, app, runs) for uid, app, runs in applications],
        )
        if not tables:
            db.commit()
            return path
        db.executemany(
            "INSERT OR REPLACE INTO signatures (group_key, runs, body, computed_at) VALUES (?, ?, ?, 0)",
            [(key, 8, body if isinstance(body, str) else json.dumps(body)) for key, body in signatures],
        )
        rows = []
        for job in running:
            job_id, uid, app, start, limit, *ended = job
            rows.append(
                (
                    str(job_id),
                    uid,
                    app,
                    f"{uid}:{app}",
                    start,
                    limit,
                    "n1",
                    2,
                    "running",
                    (ended or [None])[0],
                    start,
                )
            )
        db.executemany(
            f"INSERT OR REPLACE INTO running_jobs ({RUNNING_COLUMNS}) VALUES ({', '.join('?' * 11)})",
            rows,
        )
        db.executemany(
            "INSERT OR REPLACE INTO app_contention (group_key, label, n, slope) VALUES (?, ?, 30, ?)",
            list(contention),
        )
        run = int(db.execute("SELECT coalesce(max(run), 0) FROM jobs").fetchone()[0])
        for key, fs, seconds in run_loads:
            run += 1
            db.execute(
                "INSERT INTO jobs (run, file, job_id, group_key, start, run_time) "
                "VALUES (?, ?, ?, ?, '', NULL)",
                (run, f"load-{run}", str(run), key),
            )
            db.execute(
                "INSERT INTO run_load (run, fs, io_seconds) VALUES (?, ?, ?)",
                (run, fs, seconds),
            )
        for key, seconds in run_times:
            run += 1
            db.execute(
                "INSERT INTO jobs (run, file, job_id, group_key, start, run_time) VALUES (?, ?, ?, ?, '', ?)",
                (run, f"time-{run}", str(run), key, seconds),
            )
        db.commit()
    finally:
        db.close()
    return path


def as_series(values: np.ndarray) -> list[float]:
    return [float(v) for v in values]


READ_TOKEN, WRITE_TOKEN = "read-token-of-the-users-0123", "write-token-of-the-operator-0123"


@contextmanager
def serve_store(tmp: Path, store: Path, settings: str = "") -> Iterator[str]:
    """A real `mosaic serve` on ``store`` with a read token (``tmp/read``) and the operator's
    write token (``tmp/write``), ``settings`` as its TOML config; its URL, stopped after."""
    for name, token in (("read", READ_TOKEN), ("write", WRITE_TOKEN)):
        (tmp / name).write_text(token + "\n")
        (tmp / name).chmod(0o600)
    (tmp / "forecast.toml").write_text(settings)
    port = free_port()
    args = [str(MOSAIC), "serve", "--store", str(store), "--port", str(port), "--workers", "1"]
    args += ["--token-file", str(tmp / "read"), "--write-token-file", str(tmp / "write")]
    args += ["--config", str(tmp / "forecast.toml")]
    with open(tmp / "server.log", "wb") as log:
        process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError((tmp / "server.log").read_text())
            try:
                if httpx.get(url + "/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise RuntimeError("server did not start") from None
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
