"""Faults for the engine's crash, timeout, node-loss and resume paths, carried by the task.

A :class:`Faulty` work wraps a task's work: it aborts (SIGABRT) or hangs on items
whose name ends with given suffixes, and sleeps before every item. It travels
to dispy nodes inside the task, by reference to this module, so a node must be
able to import ``mosaic_testing.faults``: :func:`node_path` is the PYTHONPATH that lets it.

    python -m mosaic_testing.faults [--abort SUFFIX] [--hang SUFFIX] [--delay SECONDS] -- MOSAIC ARGS...

runs the ``mosaic`` command with the pipeline's tasks so wrapped (a run to
interrupt midway, in a process of its own).
"""

from __future__ import annotations

import argparse
import faulthandler
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mosaic.corpus.engine import Result, Task

SUPPORT = Path(__file__).resolve().parents[1]  # tests/support: the folder pytest's pythonpath names


@dataclass(frozen=True)
class Faulty:
    work: Any  # the wrapped task's work: (item, context) -> result
    abort: tuple[str, ...] = ()
    hang: tuple[str, ...] = ()
    delay: float = 0.0

    def __call__(self, item: Any, context: Any) -> Result:
        name = str(getattr(item, "name", item))
        time.sleep(self.delay)
        if name.endswith(self.abort):
            faulthandler.disable()  # an intended crash: no traceback dump on stderr
            os.abort()
        if name.endswith(self.hang):
            while True:
                time.sleep(3600)
        result: Result = self.work(item, context)
        return result


def faulty(task: Task, abort: tuple[str, ...] = (), hang: tuple[str, ...] = (), delay: float = 0.0) -> Task:
    """`task` with faults on its items (see :class:`Faulty`)."""
    return Task(Faulty(task.work, abort, hang, delay), task.give_up)


def node_path() -> str:
    """PYTHONPATH for a process (a dispynode, a `mosaic run`) that must import this module."""
    return os.pathsep.join(filter(None, [str(SUPPORT), os.environ.get("PYTHONPATH")]))


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m mosaic_testing.faults")
    parser.add_argument("--abort", action="append", default=[])
    parser.add_argument("--hang", action="append", default=[])
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("mosaic", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    from mosaic.cli import main as mosaic_main
    from mosaic.corpus import pipeline
    from mosaic_testing import (
        faults,  # by its importable name: Faulty pickles as mosaic_testing.faults.Faulty
    )

    for name in ("VALIDATE", "CATEGORIZE"):
        task = getattr(pipeline, name)
        setattr(pipeline, name, faults.faulty(task, tuple(args.abort), tuple(args.hang), args.delay))
    sys.argv = ["mosaic", *args.mosaic[args.mosaic[:1] == ["--"] :]]
    mosaic_main()


if __name__ == "__main__":
    main(sys.argv[1:])
