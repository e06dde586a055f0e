"""Scale-out of `mosaic run` over dispynode daemons on distinct loopback addresses.

    .venv/bin/python -m benchmarks.scaleout [--count 50000] [--seed 2019] [--dir D] [--nodes 1 2 3]
                                            [--keep]

The same year-profile corpus (``benchmarks.year.corpus``) is first run in this
process with no engine (``--workers 0``: the work alone), then over N
single-CPU dispynode daemons on 127.0.0.2, 127.0.0.3, ... (``mosaic run
--nodes``, as ``cluster/start-node.sh`` starts them), the pipeline's parent
running in this process. Per run: wall time and logs/s (per node too); CPU of
the parent (this process: scan, archives, SQLite, dispy's client threads),
of its main thread inside the store's writes, and of the nodes' process trees.
Shipping overhead = (parent + nodes CPU) - the in-process CPU, per log.
Every figure is net of the fixed costs (node start, dispy's setup importing
the analysis on each node), measured by the same run on an empty folder.

From the per-log CPU figures it projects one 64-core node and 16 such nodes:
workers scale with cores, the parent (one Python process, one SQLite
writer) does not, so its CPU per log caps the whole run's logs/s.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path

import psutil

from benchmarks.year import corpus, default_dir, scan_seconds, tree_cpu_seconds
from mosaic.config import Config
from mosaic.corpus.engine import preload, stop_process_group
from mosaic.corpus.node import dispynode_command, write_secret
from mosaic.corpus.pipeline import WORKER_PRELOAD, run
from mosaic.corpus.store import Store

STORE_WRITES = ("mark_seen", "save_facts", "save_groups", "save_results")
PROJECTED_CORES = {"one 64-core node": 64, "16 nodes x 64 cores": 16 * 64}
PAPER_YEAR_LOGS = 462_502
NODE_SETTLE_SECONDS = 0.5  # let a node reap its last job processes before reading its CPU


class StoreClock:
    """CPU seconds of the calling thread inside the store's write methods (patched in)."""

    def __init__(self) -> None:
        self.seconds = 0.0

    @contextmanager
    def installed(self):
        originals = {name: getattr(Store, name) for name in STORE_WRITES}
        for name, method in originals.items():
            setattr(Store, name, self._timed(method))
        try:
            yield self
        finally:
            for name, method in originals.items():
                setattr(Store, name, method)

    def _timed(self, method):
        def timed(*args, **kwargs):
            started = time.thread_time()
            try:
                return method(*args, **kwargs)
            finally:
                self.seconds += time.thread_time() - started

        return timed


def node_addresses(count: int) -> list[str]:
    return [f"127.0.0.{2 + i}" for i in range(count)]


@contextmanager
def daemons(count: int, port: int, workdir: Path, secret_file: str):
    """`count` single-CPU dispynode daemons, each on its own loopback address."""
    with ExitStack() as stack:
        procs = []
        for host in node_addresses(count):
            proc = subprocess.Popen(
                dispynode_command(1, host, port, str(workdir / host), secret_file),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
            stack.callback(stop_process_group, proc)
            procs.append(psutil.Process(proc.pid))
        yield procs


def measure(root: Path, out: Path, config: Config, nodes: int, workdir: Path) -> dict:
    """One pipeline run in this process: in-process (nodes = 0) or over `nodes` daemons."""
    shutil.rmtree(out, ignore_errors=True)
    with ExitStack() as stack:
        procs = (
            stack.enter_context(daemons(nodes, config.dispy_port, workdir, config.node_secret_file))
            if nodes
            else []
        )
        node_list = [f"{host}:{config.dispy_port}" for host in node_addresses(nodes)] or None
        clock = stack.enter_context(StoreClock().installed())
        node_cpu_before = sum(tree_cpu_seconds(p) for p in procs)
        cpu, main_thread, started = time.process_time(), time.thread_time(), time.perf_counter()
        summary = run([str(root)], out, config, workers=0, nodes=node_list)
        wall = time.perf_counter() - started
        parent_cpu, main_cpu = time.process_time() - cpu, time.thread_time() - main_thread
        time.sleep(NODE_SETTLE_SECONDS if nodes else 0)
        node_cpu = sum(tree_cpu_seconds(p) for p in procs) - node_cpu_before
    logs = summary["funnel"]["logs"]
    return {
        "nodes": nodes,
        "logs": logs,
        "wall": wall,
        "logs_per_s": logs / wall,
        "per_node": logs / wall / max(nodes, 1),
        "parent_cpu": parent_cpu,
        "main_thread_cpu": main_cpu,
        "store_cpu": clock.seconds,
        "node_cpu": node_cpu,
        "timings": summary["timings"],
        "load": os.getloadavg()[0],
    }


def net_of_startup(r: dict, empty: dict) -> dict:
    """`r` less the fixed costs of the same run on an empty corpus (node start, setup imports)."""
    return {
        **r,
        **{key: r[key] - empty[key] for key in ("wall", "parent_cpu", "main_thread_cpu", "node_cpu")},
    }


def projection(runs: list[dict]) -> list[str]:
    """Per-worker and parent-side rates of the largest run, scaled to bigger machines."""
    largest, alone = runs[-1], runs[0]
    logs = largest["logs"]
    worker_rate = logs / largest["node_cpu"]  # logs per CPU second of a worker
    ceilings = {
        "parent CPU": logs / largest["parent_cpu"],
        "parent main thread (scan, archives, results, SQLite)": logs / largest["main_thread_cpu"],
        "SQLite writes alone": logs / max(largest["store_cpu"], 1e-9),
    }
    overhead = (largest["parent_cpu"] + largest["node_cpu"] - alone["parent_cpu"]) / logs
    lines = [
        f"in-process work: {1e3 * alone['parent_cpu'] / logs:.2f} ms CPU per log; over "
        f"{largest['nodes']} node(s): parent {1e3 * largest['parent_cpu'] / logs:.2f} + "
        f"nodes {1e3 * largest['node_cpu'] / logs:.2f} ms per log -> shipping overhead "
        f"{1e3 * overhead:.2f} ms per log "
        f"({overhead / (alone['parent_cpu'] / logs):.0%} of the work)",
        f"one worker: {worker_rate:.0f} logs per CPU second",
    ]
    lines += [f"ceiling from {name}: {rate:,.0f} logs/s" for name, rate in ceilings.items()]
    bottleneck = min(ceilings["parent CPU"], ceilings["parent main thread (scan, archives, results, SQLite)"])
    for name, cores in PROJECTED_CORES.items():
        rate = min(cores * worker_rate, bottleneck)
        limit = "workers" if cores * worker_rate < bottleneck else "the parent"
        lines.append(
            f"{name}: {rate:,.0f} logs/s (limited by {limit}); the paper's year in "
            f"{PAPER_YEAR_LOGS / rate / 60:.1f} min"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=50_000)
    parser.add_argument("--seed", type=int, default=2019)
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("--nodes", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--keep", action="store_true", help="Keep the corpus.")
    args = parser.parse_args()
    folder = args.dir or default_dir(args.count)
    root, _ = corpus(folder, args.count, args.seed)
    work = folder / f"scaleout-{os.getpid()}"
    runs = []
    empty = work / "empty"
    empty.mkdir(parents=True, exist_ok=True)
    write_secret(str(work / "node-secret"))  # the daemons' and the runs' secret
    config = Config().replace(
        dispy_port=40_000 + os.getpid() % 20_000, node_secret_file=str(work / "node-secret")
    )
    preload(WORKER_PRELOAD)  # the in-process baseline must not pay the imports a node's setup pays once
    try:
        scanned, scan_s = scan_seconds(root)
        print(f"{scanned:,} logs; scan alone {scan_s:.1f} s ({scanned / scan_s:,.0f} logs/s)")
        print(
            f"{'nodes':>5} {'wall s':>7} {'logs/s':>7} {'per node':>8} {'parent CPU':>10} "
            f"{'main thr':>8} {'SQLite':>6} {'nodes CPU':>9} {'validate s':>10} "
            f"{'categorize s':>12} {'load':>5}"
        )
        for nodes in [0, *args.nodes]:
            fixed = measure(empty, work / "out", config, nodes, work)
            r = net_of_startup(measure(root, work / "out", config, nodes, work), fixed)
            r["logs_per_s"] = r["logs"] / r["wall"]
            r["per_node"] = r["logs_per_s"] / max(nodes, 1)
            runs.append(r)
            t = r["timings"]
            print(
                f"{nodes:>5} {r['wall']:>7.1f} {r['logs_per_s']:>7.0f} {r['per_node']:>8.0f} "
                f"{r['parent_cpu']:>10.1f} {r['main_thread_cpu']:>8.1f} {r['store_cpu']:>6.1f} "
                f"{r['node_cpu']:>9.1f} {t['scan_validate']:>10.1f} {t['categorize']:>12.1f} "
                f"{r['load']:>5.1f}",
                flush=True,
            )
        print("\n".join(["", *projection(runs)]))
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
