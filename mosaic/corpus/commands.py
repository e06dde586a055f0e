"""`mosaic run`: the click command (light to import; the pipeline loads on use)."""

from __future__ import annotations

import errno
import os
import shutil
import signal
import sqlite3
import sys
from types import FrameType

import click

from mosaic.options import config_option, load_config, mount_option, strict_option


@click.command()
@click.argument("inputs", nargs=-1, required=True, type=click.Path(exists=True))
@click.option(
    "--out",
    required=True,
    type=click.Path(file_okay=False),
    help="Output folder: traces.jsonl, evicted.jsonl, summary.json, store.sqlite.",
)
@click.option(
    "--nodes",
    metavar="HOST[:PORT][,HOST...]",
    help="Use these running dispynode daemons (PORT = their -p, default 9700) "
    "instead of starting a local one.",
)
@click.option(
    "--node-secret-file",
    metavar="PATH",
    envvar="MOSAIC_NODE_SECRET_FILE",
    help="With --nodes: the file holding the nodes' secret, readable by you alone "
    "(default: node_secret_file, ~/.config/mosaic/node-secret; see cluster/README.md).",
)
@click.option(
    "--client-address",
    metavar="ADDR",
    help="With --nodes: this machine's address (or host name) the nodes reach the run at (default: "
    "client_address, else the address of the interface that routes to the first node off the loopback).",
)
@click.option(
    "--dispy-port",
    type=click.IntRange(min=1, max=65534),
    metavar="PORT",
    help="With --nodes: the port this run listens on, and the -p of nodes named without :PORT "
    "(default: dispy_port, 9700).",
)
@click.option(
    "--workers",
    type=click.IntRange(min=0),
    default=None,
    help="CPUs of the local dispy node (default: all); 0 runs in this process "
    "(debugging: no crash isolation, no time limit).",
)
@click.option(
    "--all-runs",
    is_flag=True,
    default=None,
    help="Categorize every valid run, not only each group's heaviest.",
)
@click.option(
    "--group-by",
    type=click.Choice(["app", "cmdline"]),
    default=None,
    help="Group runs by uid and executable (app) or whole command line.",
)
@mount_option
@strict_option
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Per-log time limit in seconds; a log past it is evicted as 'timeout'.",
)
@click.option(
    "--ship-logs",
    is_flag=True,
    help="Send each log's bytes with its job (nodes without a shared file system).",
)
@config_option
@click.option("--quiet", is_flag=True, help="No progress bar and no final summary.")
def run(
    inputs: tuple[str, ...],
    out: str,
    nodes: str | None,
    node_secret_file: str | None,
    client_address: str | None,
    dispy_port: int | None,
    workers: int | None,
    all_runs: bool | None,
    group_by: str | None,
    mounts: tuple[str, ...],
    strict: bool | None,
    timeout: float | None,
    ship_logs: bool,
    config_file: str | None,
    quiet: bool,
) -> None:
    """Categorize a corpus: INPUT folders (recursive), tar archives and log files.

    Rerunning the same command resumes where an interrupted run stopped.
    """
    from mosaic.corpus.pipeline import one_screen
    from mosaic.corpus.pipeline import run as run_pipeline
    from mosaic.errors import EngineError

    config = load_config(
        config_file,
        mounts=mounts or None,
        strict=strict,
        all_runs=all_runs,
        group_by=group_by,
        trace_timeout_seconds=timeout,
        node_secret_file=node_secret_file,
        client_address=client_address,
        dispy_port=dispy_port,
    )
    node_list = _node_list(nodes, config.dispy_port)
    cpus = _workers(workers)
    previous = signal.signal(signal.SIGTERM, _interrupt)  # scancel / kill: stop like Ctrl-C
    try:
        summary = run_pipeline(
            inputs, out, config, workers=cpus, nodes=node_list, ship_bytes=ship_logs, quiet=quiet
        )
    except EngineError as error:
        raise click.ClickException(str(error)) from None
    except (OSError, sqlite3.OperationalError) as error:
        if not out_of_room(error):
            raise
        raise click.ClickException(
            f"{out}: {error} ({shutil.disk_usage(out).free:,} bytes free on its file system). "
            "The previous outputs are unchanged and the work finished so far is in the store: "
            "make room and rerun the same command to resume."
        ) from None
    except KeyboardInterrupt:
        sys.stderr.write("\ninterrupted: finished work is in the store; rerun the same command to resume\n")
        sys.exit(130)
    finally:
        signal.signal(signal.SIGTERM, previous)
    if not quiet:
        sys.stderr.write(one_screen(summary, out))


def out_of_room(error: OSError | sqlite3.OperationalError) -> bool:
    """A write into OUT refused for want of room: the kernel's ENOSPC or EDQUOT (outputs),
    SQLite's SQLITE_FULL (the store), or its SQLITE_IOERR, which is what a full disk gives
    when it refuses the shared-memory file of the store's WAL journal (the message shows
    the room left, so a real I/O error is not taken for a full disk)."""
    if isinstance(error, OSError):
        return error.errno in (errno.ENOSPC, errno.EDQUOT)
    return (getattr(error, "sqlite_errorcode", 0) & 0xFF) in (sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _node_list(nodes: str | None, default_port: int) -> list[str] | None:
    """The entries of --nodes, checked before any work (a bad port, a name that does not
    resolve, two entries at one address: exit 2 with the reason)."""
    from mosaic.corpus.engine import node_addresses
    from mosaic.errors import EngineError

    if not nodes:
        return None
    node_list = [node.strip() for node in nodes.split(",") if node.strip()]
    try:
        node_addresses(node_list, default_port)
    except EngineError as error:
        raise click.BadParameter(str(error), param_hint="--nodes") from None
    return node_list or None


def _workers(requested: int | None) -> int:
    """All CPUs by default; dispynode refuses more CPUs than the machine has."""
    available = os.cpu_count() or 1
    if requested is not None and requested > available:
        raise click.BadParameter(
            f"{requested} > {available} CPUs on this machine (use --nodes to go beyond one machine)",
            param_hint="--workers",
        )
    return available if requested is None else requested
