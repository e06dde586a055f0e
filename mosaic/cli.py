"""`mosaic` command line: thin wrappers that parse, call one function, print.

click (a well-kept, widely used CLI library) gives us subcommands, typed
options and `--help` pages for free. Heavy modules are imported inside each
command so that `mosaic --help` and `mosaic categorize` start fast.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import sys
from collections.abc import Callable, Iterator
from typing import Any

import click

from mosaic.distribution import refuse_foreign_package, version_text
from mosaic.extras import missing_extra
from mosaic.options import config_option, load_config, mount_option, strict_option

refuse_foreign_package()  # the console script's first import: say so if `mosaic` is another's

# What each command's non-zero exit statuses mean, shown at the end of its --help so a
# script can trust them; a command not listed has the usual three.
USUAL_STATUSES = {1: "an error stopped the command (message on stderr)", 2: "bad usage or configuration"}
EXIT_STATUSES: dict[str, dict[int, str]] = {
    "categorize": {
        1: "some log was evicted or unreadable (every log's object is still printed)",
        2: "bad usage or configuration",
    },
    "run": {
        1: "the run stopped (engine error, no room in OUT): rerun the same command to resume",
        2: "bad usage or configuration",
        130: "interrupted (Ctrl-C, SIGTERM): rerun the same command to resume",
    },
    "figures": {
        1: "OUT holds no summary.json (run `mosaic run` first), or a malformed one (file and key named)",
        2: "bad usage or configuration",
    },
    "explain": {1: "the log is evicted (the page says why)", 2: "bad usage or configuration"},
    "report": {
        1: "OUT holds no run to report (run `mosaic run` first), or the site could not be written",
        2: "bad usage or configuration",
    },
    "plot": {1: "the log is evicted (its reason is printed)", 2: "bad usage or configuration"},
    "eval": {
        1: "RESULTS holds no traces.jsonl nor evicted.jsonl, or the truth file no line",
        2: "bad usage",
    },
    "serve": {
        1: "an error stopped the server (message on stderr)",
        2: "bad usage or configuration (a non-loopback address without --token-file, a bad token file, "
        "a --store that does not exist without --create)",
        3: "the server could not start (address in use, store not usable)",
    },
    "lookup": {
        1: "the application is unknown (a bare name lists the matching paths)",
        2: "bad usage or configuration",
        3: "the server is unreachable or answered an error",
    },
    "forecast": {
        1: "the answer has no risk class (an unknown application, too few runs or no signature: it says why)",
        2: "bad usage or configuration",
        3: "the server is unreachable or answered an error",
    },
    "epilog": {
        1: "an error stopped the command; never `epilog post`, which reports every problem with the "
        "job, its logs, the spool or the service on stderr and exits 0 (an epilog never fails a job)",
        2: "bad usage, or a spool folder others could use (the reason is printed)",
    },
    "store": {
        1: "the store is damaged, of a newer layout, or the copy failed (message on stderr)",
        2: "bad usage",
    },
    "timeline": {
        1: "the store is damaged or of a newer layout (message on stderr)",
        2: "bad usage",
    },
    "apps": {
        1: "no application matches the filters",
        2: "bad usage or configuration",
        3: "the server is unreachable or answered an error",
    },
}


def exit_status_epilog(name: str) -> str:
    """The "Exit status" paragraph of a command's --help (click keeps \\b blocks as written)."""
    # A group's subcommand ("epilog post") has its group's statuses unless it has its own.
    statuses = EXIT_STATUSES.get(name, EXIT_STATUSES.get(name.split()[0], USUAL_STATUSES))
    lines = [f"  {code:<3} {meaning}" for code, meaning in statuses.items()]
    return "\b\nExit status:\n  0   done\n" + "\n".join(lines)


def with_exit_statuses(name: str, command: click.Command) -> click.Command:
    """``command`` with its exit statuses in its --help (and its subcommands', for a group)."""
    if command.epilog is None:
        command.epilog = exit_status_epilog(name)
    if isinstance(command, click.Group):
        for sub_name, sub in command.commands.items():
            with_exit_statuses(f"{name} {sub_name}", sub)
    return command


class LazyGroup(click.Group):
    """Subcommands living in other modules, imported only when invoked."""

    lazy = {
        "run": "mosaic.corpus.commands:run",
        "synth": "mosaic.synth.commands:synth",
        "eval": "mosaic.synth.commands:evaluate",
        "figures": "mosaic.report.commands:figures",
        "plot": "mosaic.report.commands:plot",
        "explain": "mosaic.html.commands:explain",
        "report": "mosaic.html.commands:report",
        "serve": "mosaic.service.commands:serve",
        "lookup": "mosaic.service.commands:lookup",
        "forecast": "mosaic.service.commands:forecast",
        "apps": "mosaic.service.commands:apps",
        "epilog": "mosaic.service.epilog:epilog",
        "store": "mosaic.corpus.store_commands:store",
        "timeline": "mosaic.corpus.timeline_commands:timeline",
    }

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(self.lazy))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        with _naming_extras(lambda: name):
            if name in self.lazy:
                module, attr = self.lazy[name].split(":")
                command: click.Command = getattr(importlib.import_module(module), attr)
                return with_exit_statuses(name, command)
        found = super().get_command(ctx, name)
        return None if found is None else with_exit_statuses(name, found)

    def invoke(self, ctx: click.Context) -> Any:
        with _naming_extras(lambda: ctx.invoked_subcommand or ""):
            return super().invoke(ctx)


@contextlib.contextmanager
def _naming_extras(command: Callable[[], str]) -> Iterator[None]:
    """Turn a module of a missing extra, met by a command, into the message naming the extra."""
    try:
        yield
    except ModuleNotFoundError as error:
        missing = missing_extra(error, command())
        if missing is None:
            raise
        raise missing from None


def _print_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        click.echo(version_text())
        ctx.exit()


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show the version, where `mosaic` is imported from, and any other distribution of that name.",
)
def main() -> None:
    """MOSAIC: categorize HPC jobs' I/O behaviour from Darshan logs.

    \b
    Per job:      mosaic categorize LOG...
    Per year:     mosaic run ARCHIVE_DIR --out results/
    Figures:      mosaic figures results/   |   mosaic plot LOG -o trace.png
    In a browser: mosaic explain LOG -o job.html   |   mosaic report results/
    Accuracy:     mosaic synth year data/sample --count 2000 && mosaic eval ...
    Applications: mosaic apps results/   |   mosaic lookup --uid U --app EXE --store results/store.sqlite
    Schedulers:   mosaic serve --store results/store.sqlite
    Years:        mosaic store prune|backup|restore|info results/store.sqlite
    """
    from mosaic.limits import keep_heap

    keep_heap()  # every command reads logs one after another: the run's parent and the server too


@main.command()
@click.argument("files", nargs=-1, required=True, type=click.Path())
@config_option
@mount_option
@strict_option
@click.option(
    "--explain",
    is_flag=True,
    help="Add the reasons of the labels: a sentence each, with its numbers and SPEC rule.",
)
@click.option("--text", is_flag=True, help="Print the reasons as sentences, not JSON (implies --explain).")
def categorize(
    files: tuple[str, ...],
    config_file: str | None,
    mounts: tuple[str, ...],
    strict: bool | None,
    explain: bool,
    text: bool,
) -> None:
    """Categorize each log FILE; print one JSON object per line.

    An unusable log prints {"file", "status": "evicted", "reason", "detail"}
    instead; the command never stops on a bad log, and exits with status 1
    once every log is printed. A log needing more than worker_memory_bytes
    is too_large, as in `mosaic run` and `mosaic serve`.
    --explain adds "reasons" to each object; --text prints, per log, its
    labels and one line per reason ("+" given, "-" close but not given).
    Each JSON object names the mosaic_version and config_hash that made it,
    as the lines of `mosaic run`'s traces.jsonl and evicted.jsonl do.
    """
    from mosaic import __version__
    from mosaic.analysis.reasons import as_text
    from mosaic.limits import limit_memory
    from mosaic.logfile import categorize_file

    cfg = load_config(config_file, mounts=mounts or None, strict=strict)
    # The bound batch and service workers run under (unbounded, a 4.2 MB log
    # with a 6e7-bin HEATMAP took 4.4 GB here). Logs are read one after another, so
    # one bound on this process bounds each of them.
    limit_memory(cfg.worker_memory_bytes)
    made = {"mosaic_version": __version__, "config_hash": cfg.hash()}  # docs/release.md
    evicted = 0
    for path in files:
        found = categorize_file(path, cfg, explain or text)
        evicted += found["status"] != "ok"
        sys.stdout.write((as_text(found) if text else json.dumps({**found, **made})) + "\n")
    sys.exit(1 if evicted else 0)


if __name__ == "__main__":  # pragma: no cover
    main()
