"""`mosaic run --nodes` across network namespaces: logs/s over 1-3 nodes, and what a lost node costs.

    .venv/bin/python -m benchmarks.hosts [--count 10000] [--seed 2019] [--dir D] [--nodes 1 2 3] [--keep]

Root only: the hosts are network namespaces on a bridge
(tests/support/mosaic_testing/hosts.py, as in tests/corpus/test_hosts.py), each
node a single-CPU dispynode started by cluster/start-node.sh, the run in a client
namespace (this script again, with ``--inner``: the pipeline in that process).
Every host shares this machine's cores, so more nodes bring no speed-up: the
figure is what the client and dispy cost per log, side by side with a local
``--workers 2`` run. Each figure is net of the same run on an empty folder (the
cluster's start: nodes joining, dispy's setup importing the analysis).

Lost node: the same two-node run twice, once whole and once with one node
killed (``kill -9`` of its dispynode) once a quarter of the logs are
validated. Both runs count each log a worker finished (:class:`Tally`); logs
finished twice are the work redone. Time to notice: from the kill to the run's
first count of fewer node CPUs (the engine asks dispy every second).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "support"))  # mosaic_testing: the namespaces of the tests

LOST_AT = 0.25  # share of the logs validated when a node is killed
NODE_PORT = 9701  # start-node.sh's default (each host has its own ports)
NODE_SETTLE_SECONDS = 0.5  # let a node reap its last job processes before reading its CPU


@dataclass(frozen=True)
class Tally:
    """A task's work that notes each item it finished in FOLDER/PID (on the node that ran it)."""

    work: Any
    folder: str
    stage: str

    def __call__(self, item: Any, context: Any) -> Any:
        result = self.work(item, context)
        with open(os.path.join(self.folder, str(os.getpid())), "a") as fh:
            fh.write(f"{self.stage} {item.name}\n")
        return result


def redone(folder: Path) -> int:
    """Items finished more than once, over every worker's notes."""
    counts = Counter(line for path in folder.iterdir() for line in path.read_text().splitlines())
    return sum(count - 1 for count in counts.values())


def inner(spec: dict[str, Any]) -> dict[str, Any]:
    """One run in this process (in the client namespace); its figures."""
    from benchmarks.hosts import Tally as NodeTally  # by this name, not __main__'s, on the nodes
    from benchmarks.year import children_cpu_seconds
    from mosaic.config import Config
    from mosaic.corpus import pipeline
    from mosaic.corpus.engine import DispyEngine, Task, preload

    preload(pipeline.WORKER_PRELOAD)  # a local run's parent must not count the imports
    changes: list[tuple[float, int]] = []
    counted = DispyEngine.cpus

    def cpus(engine: DispyEngine) -> int:
        value = counted(engine)
        if not changes or changes[-1][1] != value:
            changes.append((time.monotonic(), value))
        return value

    DispyEngine.cpus = cpus  # type: ignore[method-assign]
    if spec["tally"]:
        for name in ("VALIDATE", "CATEGORIZE"):
            task = getattr(pipeline, name)
            setattr(pipeline, name, Task(NodeTally(task.work, spec["tally"], name), task.give_up))
    config = Config().replace(node_secret_file=spec["secret"])
    started, cpu, children = time.perf_counter(), time.process_time(), children_cpu_seconds()
    summary = pipeline.run([spec["root"]], spec["out"], config, workers=spec["workers"], nodes=spec["nodes"])
    return {
        "wall": time.perf_counter() - started,
        "parent_cpu": time.process_time() - cpu,
        "local_cpu": children_cpu_seconds() - children,  # the local node's tree (and the reaper)
        "logs": summary["funnel"]["logs"],
        "changes": changes,
    }


class Site:
    """The hosts, the nodes running on them, and how to run `inner` on the client."""

    def __init__(self, hosts: Any, work: Path, node_count: int, logs: int) -> None:
        self.work, self.logs = work, logs
        self.client = hosts.add("client")
        self.hosts = [hosts.add(f"node{i + 1}") for i in range(node_count)]
        self.nodes: dict[str, subprocess.Popen[bytes]] = {}
        (work / "tmp").mkdir(mode=0o700)
        self.env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
            "MOSAIC_NODE_SECRET_FILE": str(work / "node-secret"),
            "MOSAIC_VENV": str(Path(sys.executable).parent.parent),
            "TMPDIR": str(work / "tmp"),
        }

    def up(self, count: int) -> list[str]:
        """The first `count` nodes running (started when missing); their names."""
        from mosaic_testing.hosts import listening

        for host in self.hosts[:count]:
            node = self.nodes.get(host.name)
            if node is None or node.poll() is not None:
                node = host.popen(
                    ["bash", str(REPO / "cluster" / "start-node.sh"), "", "1"],
                    env=self.env,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
                while not listening(node.pid, NODE_PORT):
                    if node.poll() is not None:
                        raise SystemExit(f"{host.name}: start-node.sh exited {node.returncode}")
                    time.sleep(0.1)
                self.nodes[host.name] = node
        return [host.name for host in self.hosts[:count]]

    def nodes_cpu(self, names: list[str]) -> float:
        import psutil

        from benchmarks.year import tree_cpu_seconds

        time.sleep(NODE_SETTLE_SECONDS)
        return sum(tree_cpu_seconds(psutil.Process(self.nodes[name].pid)) for name in names)

    def run(
        self, root: Path, nodes: list[str] | None, tally: Path | None = None, kill: str | None = None
    ) -> dict[str, Any]:
        """`inner` on the client over `nodes` (None: a local --workers 2 node); with `kill`, that
        node is killed once LOST_AT of the logs are validated."""
        from mosaic_testing.runs import done_count

        out = self.work / "out"
        shutil.rmtree(out, ignore_errors=True)
        spec = {
            "root": str(root),
            "out": str(out),
            "nodes": nodes,
            "workers": 0 if nodes else 2,
            "secret": self.env["MOSAIC_NODE_SECRET_FILE"],
            "tally": str(tally) if tally else None,
        }
        before = self.nodes_cpu(nodes or [])
        command = [sys.executable, "-m", "benchmarks.hosts", "--inner", json.dumps(spec)]
        run = self.client.popen(command, env=self.env, stdout=subprocess.PIPE, cwd=REPO)
        killed = None
        if kill is not None:
            while done_count(out) < LOST_AT * self.logs and run.poll() is None:
                time.sleep(0.02)
            self.nodes[kill].send_signal(signal.SIGKILL)
            killed = time.monotonic()
            self.nodes[kill].wait()
        said, _ = run.communicate()
        if run.returncode != 0:
            raise SystemExit(f"the run on the client exited {run.returncode}")
        result: dict[str, Any] = json.loads(said.decode().splitlines()[-1])
        alive = [name for name in nodes or [] if name != kill]
        result["nodes_cpu"] = self.nodes_cpu(alive) - before + result["local_cpu"]
        if killed is not None:
            dropped = [at for at, cpus in result["changes"] if at > killed]
            result["notice"] = dropped[0] - killed if dropped else float("nan")
        if tally is not None:
            result["redone"] = redone(tally)
        return result


def throughput(site: Site, root: Path, empty: Path, node_counts: list[int]) -> None:
    print(
        f"{'where':<18} {'wall s':>7} {'logs/s':>7} {'parent CPU s':>12} {'ms/log':>6} "
        f"{'workers CPU s':>11} {'load':>5}"
    )
    for count in [0, *node_counts]:
        nodes = site.up(count) if count else None
        fixed, r = site.run(empty, nodes), site.run(root, nodes)
        wall, cpu = r["wall"] - fixed["wall"], r["parent_cpu"] - fixed["parent_cpu"]
        where = f"{count} namespace node{'s' if count > 1 else ''}" if count else "local --workers 2"
        nodes_cpu = f"{r['nodes_cpu'] - fixed['nodes_cpu']:>11.1f}"
        print(
            f"{where:<18} {wall:>7.1f} {r['logs'] / wall:>7.0f} {cpu:>12.1f} {1e3 * cpu / r['logs']:>6.2f} "
            f"{nodes_cpu} {os.getloadavg()[0]:>5.1f}",
            flush=True,
        )


def lost_node(site: Site, root: Path) -> None:
    nodes = site.up(2)
    runs = {}
    for kill in (None, nodes[1]):
        with tempfile.TemporaryDirectory(dir=site.work) as tally:
            runs[kill] = site.run(root, site.up(2), Path(tally), kill)
    whole, lost = runs[None], runs[nodes[1]]
    logs = whole["logs"]
    print(
        f"\ntwo nodes, one killed at {LOST_AT:.0%} of the logs: {lost['wall']:.1f} s against "
        f"{whole['wall']:.1f} s whole (+{lost['wall'] - whole['wall']:.1f} s); noticed after "
        f"{lost['notice']:.1f} s; {lost['redone']:,} of {logs:,} logs' work redone "
        f"({lost['redone'] / logs:.1%}; the whole run redid {whole['redone']})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=2019)
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("--nodes", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--keep", action="store_true", help="Keep the corpus.")
    parser.add_argument("--inner", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner:
        print(json.dumps(inner(json.loads(args.inner))))
        return
    if os.geteuid() != 0 or shutil.which("ip") is None:
        print("skipped: benchmarks.hosts needs root and iproute2 (network namespaces)")
        return
    from benchmarks.year import corpus, default_dir
    from mosaic.corpus.node import write_secret
    from mosaic_testing.hosts import Hosts

    folder = args.dir or default_dir(args.count)
    root, _ = corpus(folder, args.count, args.seed)
    work = Path(tempfile.mkdtemp(prefix="mosaic-bench-hosts-"))
    empty = work / "empty"
    empty.mkdir()
    try:
        with Hosts() as hosts:
            site = Site(hosts, work, max(args.nodes), args.count)
            write_secret(site.env["MOSAIC_NODE_SECRET_FILE"])
            print(f"{args.count:,} logs (year profile, seed {args.seed}); load {os.getloadavg()[0]:.1f}")
            throughput(site, root, empty, args.nodes)
            lost_node(site, root)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if not args.keep:
            with contextlib.suppress(OSError):
                shutil.rmtree(root)


if __name__ == "__main__":
    main()
