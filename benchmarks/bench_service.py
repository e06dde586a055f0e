"""Load test of `mosaic serve` on loopback: concurrent clients posting logs.

    .venv/bin/python -m benchmarks.bench_service [--corpus heavy|year] [--log PATH ...]
                                                 [--seconds 30] [--clients 8]

``heavy`` (default): heavy logs of `mosaic synth heavy`
(512-16,384-rank jobs, thousands of records); ``year``: a small Blue-Waters-like
year (`mosaic synth year`, about a third of it invalid logs) kept under 100 KB;
``--log PATH``: these files instead (e.g. one ~200 kB log of a few thousand
operations, every client posting it).
Starts `mosaic serve` on a free loopback port and lets CLIENTS closed-loop
clients post the logs round-robin for SECONDS. Side by side: the same logs
categorized serially in this process (no HTTP, no worker pool), the floor the
service adds its overhead to. Targets: p99 <= 25 ms, >= 300
requests/s with 8 clients on 2 cores, no failed request. A 422 for an invalid
log is a correct answer; failed = transport error, 5xx, or an eviction by
timeout / worker crash.

``--forecast-running 5000``: instead, one client asking GET /v1/forecast with
5,000 running jobs in the registry (contract tables seeded as their branches
fill them), interleaved with the lookup of the same application: forecast
p99 <= 20 ms.
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import httpx
import numpy as np
import psutil

from mosaic.config import Config
from mosaic.limits import keep_heap
from mosaic.service.pool import WORKER_FAILURES, categorize_posted
from mosaic.synth.heavy import generate_heavy
from mosaic.synth.year import generate_year

MAX_LOG_BYTES = 100_000
TARGET_P99_SECONDS = 0.025
TARGET_RATE = 300.0
STARTUP_SECONDS = 120.0


def corpus_logs(corpus: str, folder: Path, count: int, seed: int) -> list[bytes]:
    """The logs to post: every heavy log, or the year's logs under MAX_LOG_BYTES."""
    if corpus == "heavy":
        generate_heavy(folder, count, seed)
        return [p.read_bytes() for p in sorted(folder.rglob("*.darshan*"))]
    generate_year(folder, count, seed, archive_share=0.0)
    paths = sorted(p for p in folder.rglob("*.darshan*") if p.stat().st_size < MAX_LOG_BYTES)
    return [p.read_bytes() for p in paths]


def serial_rate(logs: list[bytes]) -> tuple[float, float, float]:
    """Logs per second categorized in this process (after a warm-up pass), p99 seconds
    per log, and the share of them that are ok: the service must answer 200 for the
    same share."""
    config = Config()
    for data in logs:
        categorize_posted(data, config)
    seconds, ok = [], 0
    for data in logs * max(1, 200 // len(logs)):
        began = time.perf_counter()
        ok += categorize_posted(data, config).status == "ok"
        seconds.append(time.perf_counter() - began)
    return len(seconds) / sum(seconds), float(np.percentile(seconds, 99)), ok / len(seconds)


def start_server(folder: Path, workers: int, clients: int) -> tuple[subprocess.Popen, int]:
    """`mosaic serve` whose queue takes a post of every client at once: they all come
    from 127.0.0.1, one client to the server (service_max_queued_per_client)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = folder / "service.toml"
    default = Config()
    config.write_text(
        f"service_max_queued = {max(clients, default.service_max_queued)}\n"
        f"service_max_queued_per_client = {max(clients, default.service_max_queued_per_client)}\n"
    )
    mosaic = Path(sys.executable).with_name("mosaic")
    process = subprocess.Popen(
        [
            str(mosaic),
            "serve",
            "--create",
            "--store",
            str(folder / "store.sqlite"),
            "--port",
            str(port),
            "--workers",
            str(workers),
            "--config",
            str(config),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline and process.poll() is None:
        try:
            httpx.get(url + "/healthz").raise_for_status()
            return process, port
        except httpx.HTTPError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit("mosaic serve did not start")


def cpu_seconds(server: psutil.Process) -> tuple[float, float]:
    """CPU time used so far by the server's main process and by its workers."""

    def used(process: psutil.Process) -> float:
        times = process.cpu_times()
        return times.user + times.system

    return used(server), sum(used(child) for child in server.children(recursive=True))


def load(port: int, logs: list[bytes], clients: int, seconds: float, warmup: float, rate: float | None):
    """Clients posting logs: (latency, status, reason) of the requests begun after the
    warm-up, and the number of all requests sent.

    Closed loop (``rate`` None): each client posts its next log as soon as it has
    the answer, so the clients measure the most the service can take, and by
    Little's law their mean latency is ``clients / throughput`` whatever the
    service does. Paced (``rate`` requests/s in all): client ``i`` posts its
    ``k``-th log at ``(k * clients + i) / rate`` seconds, the offered load a
    scheduler would send; a request's latency runs from that planned time, so a
    client held up by a slow answer counts the wait too (no coordinated omission).
    Each client is a thread with one keep-alive stdlib connection: a few tenths of
    a millisecond of CPU per request, where httpx's async client spent ~5 ms and
    so measured mostly itself on a 2-core machine.
    """
    feed = itertools.cycle(logs)
    began = time.perf_counter()
    measured_from, stop = began + warmup, began + warmup + seconds
    samples: list[tuple[float, int, str]] = []
    counts: list[int] = []

    def planned(index: int, count: int) -> float:
        """When this client's next request is due: now when closed-loop."""
        if rate is None:
            return time.perf_counter()
        due = began + (count * clients + index) / rate
        time.sleep(max(due - time.perf_counter(), 0.0))
        return due

    def client(index: int) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        count = 0
        while (sent := planned(index, count)) < stop:
            count += 1
            try:
                connection.request(
                    "POST",
                    "/v1/categorize",
                    body=next(feed),
                    headers={"Content-Type": "application/octet-stream"},
                )
                response = connection.getresponse()
                body = response.read()
                status = response.status
                reason = json.loads(body).get("reason", "") if status == 422 else ""
            except (OSError, http.client.HTTPException) as error:
                connection.close()
                status, reason = 0, type(error).__name__
            if sent >= measured_from:
                samples.append((time.perf_counter() - sent, status, reason))
        connection.close()
        counts.append(count)

    threads = [threading.Thread(target=client, args=(index,)) for index in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return samples, sum(counts)


FORECAST_TARGET_P99_SECONDS = 0.020
FORECAST_GROUPS = 300
FORECAST_POINTS = 100
FORECAST_LOOKUP_TARGET = 0.005
CPU_REQUESTS = 100
RUNNING_COLUMNS = (
    "job_id, uid, application, group_key, start_epoch, time_limit, nodes, tasks, state, ended_epoch, updated"
)


def seed_forecast_store(folder: Path, running: int, seed: int) -> tuple[Path, int, str]:
    """`mosaic run` over a small year, then the contract tables the forecast reads, as their
    owners will fill them: FORECAST_GROUPS signatures of FORECAST_POINTS points with four bursts,
    half of them sensitive, each group's runs on /scratch and /home, and ``running`` running
    jobs of random groups started within their expected run. The lookup's and the forecast's
    (uid, application): the year's group with the most runs, given a signature too."""
    import sqlite3

    from mosaic.forecast_store import CONTRACT_TABLES

    generate_year(folder / "logs", 400, seed, archive_share=0.0)
    out = folder / "out"
    mosaic = Path(sys.executable).with_name("mosaic")
    subprocess.run(
        [str(mosaic), "run", str(folder / "logs"), "--out", str(out), "--workers", "2", "--quiet"], check=True
    )
    store = out / "store.sqlite"
    rng = np.random.default_rng(seed)
    now = time.time()
    db = sqlite3.connect(store)
    db.executescript(CONTRACT_TABLES)
    uid, app = db.execute("SELECT uid, application FROM applications ORDER BY runs DESC LIMIT 1").fetchone()
    keys = [f"{1000 + g % 50}:/apps/app{g}" for g in range(FORECAST_GROUPS)]
    medians = rng.uniform(600, 36000, FORECAST_GROUPS)
    rows = []
    for key, median in zip([*keys, f"{uid}:{app}"], [*medians, 3600.0]):
        read = rng.uniform(0, 1e8, FORECAST_POINTS) * (rng.uniform(size=FORECAST_POINTS) < 0.3)
        write = rng.uniform(0, 1e8, FORECAST_POINTS) * (rng.uniform(size=FORECAST_POINTS) < 0.3)
        bursts = [
            {
                "direction": "write",
                "start": float(x),
                "duration": 0.05,
                "bytes": 1e9,
                "bandwidth": 1e8,
                "runs": 8,
            }
            for x in np.sort(rng.uniform(0, 0.9, 4))
        ]
        body = {
            "runs": 10,
            "resolution": 60.0,
            "run_time": {"p10": median * 0.9, "p50": median, "p90": median * 1.1},
            "normalized": {
                "points": FORECAST_POINTS,
                "read": {q: read.tolist() for q in ("p10", "p50", "p90")},
                "write": {q: write.tolist() for q in ("p10", "p50", "p90")},
            },
            "bursts": bursts,
        }
        rows.append((key, 10, json.dumps(body), now))
    db.executemany(
        "INSERT OR REPLACE INTO signatures (group_key, runs, body, computed_at) VALUES (?, ?, ?, ?)", rows
    )
    db.executemany(
        "INSERT OR REPLACE INTO app_contention (group_key, label, n, slope) VALUES (?, ?, 30, ?)",
        [
            (key, "sensitive" if g % 2 else "insensitive", 1e-9 if g % 2 else 0.0)
            for g, key in enumerate(keys)
        ],
    )
    run = int(db.execute("SELECT coalesce(max(run), 0) FROM jobs").fetchone()[0])
    jobs, loads = [], []
    for g, key in enumerate([*keys, f"{uid}:{app}"]):
        for r in range(10):
            run += 1
            jobs.append((run, f"forecast-{run}", str(run), key))
            loads.append((run, "/scratch" if (g + r) % 3 else "/home", float(rng.uniform(10, 100))))
    db.executemany("INSERT INTO jobs (run, file, job_id, group_key, start) VALUES (?, ?, ?, ?, '')", jobs)
    db.executemany("INSERT INTO run_load (run, fs, io_seconds) VALUES (?, ?, ?)", loads)
    which = rng.integers(0, FORECAST_GROUPS, running)
    db.executemany(
        f"INSERT INTO running_jobs ({RUNNING_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, '', 1, 'running', NULL, ?)",
        [
            (
                str(900000 + j),
                1000 + int(g) % 50,
                f"/apps/app{g}",
                keys[g],
                now - float(rng.uniform(0, 0.9)) * medians[g],
                float(medians[g] * 1.5) if j % 3 else None,
                now,
            )
            for j, g in enumerate(which)
        ],
    )
    db.commit()
    db.close()
    return store, int(uid), str(app)


def forecast_case(args: argparse.Namespace) -> None:
    """One scheduler asking GET /v1/forecast and the lookup GET /v1/applications for the same
    (uid, app), interleaved, over HTTP with ``--forecast-running`` jobs running."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        store, uid, app = seed_forecast_store(folder, args.forecast_running, args.seed)
        port = free_loopback_port()
        mosaic = Path(sys.executable).with_name("mosaic")
        process = subprocess.Popen(
            [str(mosaic), "serve", "--store", str(store), "--port", str(port), "--workers", "1"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + STARTUP_SECONDS
            while True:
                try:
                    httpx.get(url + "/healthz").raise_for_status()
                    break
                except httpx.HTTPError:
                    if time.monotonic() > deadline or process.poll() is not None:
                        raise SystemExit("mosaic serve did not start") from None
                    time.sleep(0.2)
            params = {"uid": uid, "app": app}
            times: dict[str, list[float]] = {"forecast": [], "lookup": []}
            cpu: dict[str, float] = {}
            with httpx.Client(base_url=url, timeout=30) as client:
                first = client.get("/v1/forecast", params=params).json()
                ends = time.monotonic() + args.seconds
                while time.monotonic() < ends:
                    for name, path in (("forecast", "/v1/forecast"), ("lookup", "/v1/applications")):
                        began = time.perf_counter()
                        response = client.get(path, params=params)
                        times[name].append(time.perf_counter() - began)
                        assert response.status_code == 200, response.text
                # the server's CPU per request, each kind alone (does not depend on the machine's load)
                server = psutil.Process(process.pid)
                for name, path in (("forecast", "/v1/forecast"), ("lookup", "/v1/applications")):
                    before = sum(cpu_seconds(server))
                    for _ in range(CPU_REQUESTS):
                        client.get(path, params=params)
                    cpu[name] = (sum(cpu_seconds(server)) - before) / CPU_REQUESTS
        finally:
            process.terminate()
            process.wait(timeout=30)
    print(
        f"forecast: {args.forecast_running} running jobs ({first['running']['with_signature']} with a "
        f"signature, {FORECAST_GROUPS} groups), answer {len(json.dumps(first)) / 1000:.1f} kB, "
        f"risk {first['risk']['class']}; load average {os.getloadavg()[0]:.1f}"
    )
    for name, target in (("forecast", FORECAST_TARGET_P99_SECONDS), ("lookup", FORECAST_LOOKUP_TARGET)):
        values = np.array(times[name])
        p50, p99 = np.percentile(values, [50, 99])
        print(
            f"{name:<9} {len(values):6d} requests   p50 {p50 * 1e3:6.2f} ms   p99 {p99 * 1e3:6.2f} ms   "
            f"target p99 <= {target * 1e3:g} ms   ratio {p99 / target:.2f}   "
            f"server CPU {cpu[name] * 1e3:.2f} ms a request"
        )


def free_loopback_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--forecast-running",
        type=int,
        default=None,
        metavar="N",
        help="instead: GET /v1/forecast beside a lookup with N running jobs (the target: 5000)",
    )
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--corpus", choices=("heavy", "year"), default="heavy")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument(
        "--rate", type=float, default=None, help="paced: this many requests/s in all [default: closed loop]"
    )
    parser.add_argument("--log", type=Path, nargs="+", help="post these logs instead of a generated corpus")
    parser.add_argument(
        "--count", type=int, default=None, help="logs generated [default: 12 heavy, 600 in the year]"
    )
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--seed", type=int, default=2019)
    args = parser.parse_args()
    if args.forecast_running is not None:
        forecast_case(args)
        return
    keep_heap()  # the in-process baseline under the allocator settings of the service's workers

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        count = args.count or (12 if args.corpus == "heavy" else 600)
        if args.log:
            logs = [path.read_bytes() for path in args.log]
        else:
            logs = corpus_logs(args.corpus, folder / "logs", count, args.seed)
        sizes = np.array([len(data) for data in logs])
        print(
            f"{len(logs)} {'given' if args.log else args.corpus} logs "
            f"(median {np.median(sizes) / 1000:.1f} KB, max {sizes.max() / 1000:.1f} KB); "
            f"{os.cpu_count()} CPUs, {args.workers} workers, {args.clients} clients "
            f"({'closed loop' if args.rate is None else f'paced at {args.rate:g} req/s in all'}), "
            f"{args.seconds:g} s; load average before {os.getloadavg()[0]:.1f}"
        )
        floor, floor_p99, ok_share = serial_rate(logs)
        process, port = start_server(folder, args.workers, args.clients)
        try:
            server = psutil.Process(process.pid)
            main_before, workers_before = cpu_seconds(server)
            client_before = time.process_time()
            samples, sent = load(port, logs, args.clients, args.seconds, args.warmup, args.rate)
            main_cpu, workers_cpu = np.subtract(cpu_seconds(server), (main_before, workers_before)) / sent
            client_cpu = (time.process_time() - client_before) / sent
        finally:
            process.terminate()
            process.wait(timeout=30)
    report(samples, args.seconds, floor, floor_p99, ok_share)
    # CPU per request does not depend on what else runs on the machine; wall-clock does.
    total = main_cpu + workers_cpu + client_cpu
    print(
        f"CPU per request     {total * 1e3:8.2f} ms   (server {main_cpu * 1e3:.2f}, "
        f"workers {workers_cpu * 1e3:.2f}, client {client_cpu * 1e3:.2f}): "
        f"{(os.cpu_count() or 1) / total:.0f} req/s if the CPUs were ours alone"
    )
    print(f"load average after  {os.getloadavg()[0]:8.1f}   (other processes share the CPUs)")


def report(samples, seconds: float, floor: float, floor_p99: float, ok_share: float) -> None:
    latency = np.array([s[0] for s in samples])
    status = np.array([s[1] for s in samples])
    reasons = np.array([s[2] for s in samples])
    failed = ~np.isin(status, (200, 422)) | np.isin(reasons, WORKER_FAILURES)
    rate = len(samples) / seconds
    p50, p99 = np.percentile(latency, [50, 99])
    print(
        f"requests            {len(samples)}  (200: {(status == 200).sum()}, "
        f"422 invalid log: {((status == 422) & ~failed).sum()}, failed: {failed.sum()})"
    )
    print(f"share answered 200  {(status == 200).mean():8.3f}   in-process ok share {ok_share:.3f}")
    evicted = Counter(reasons[(status == 422) & ~failed].tolist())
    print("422 by reason       " + ", ".join(f"{k}: {n}" for k, n in evicted.most_common()))
    if failed.any():
        kinds = Counter(zip(status[failed].tolist(), reasons[failed].tolist()))
        print("failed by (status, reason): " + ", ".join(f"{k}: {n}" for k, n in kinds.items()))
    print(
        f"throughput          {rate:8.1f} req/s   target >= {TARGET_RATE:g}   ratio {rate / TARGET_RATE:.2f}"
    )
    print(f"latency p50         {p50 * 1e3:8.1f} ms")
    print(
        f"latency p99         {p99 * 1e3:8.1f} ms     target <= {TARGET_P99_SECONDS * 1e3:g}"
        f"   ratio {p99 / TARGET_P99_SECONDS:.2f}"
    )
    print(f"latency max         {latency.max() * 1e3:8.1f} ms")
    print(
        f"serial, in-process  {floor:8.1f} logs/s   p99 {floor_p99 * 1e3:.1f} ms per log; "
        f"service / serial {rate / floor:.2f}"
    )


if __name__ == "__main__":
    main()
