"""`mosaic store`: the results store of years of service (prune, back up, restore, info).

Each subcommand works beside a running ``mosaic serve`` on the same file: it
writes in short transactions (posts wait for one at most) and reads from WAL
snapshots. docs/operations.md says when to run which.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from datetime import datetime
from typing import Any

import click


def _opened(path: str) -> Any:
    """The store at ``path``; a damaged, newer or unopenable store stops the command (exit 1)."""
    from mosaic.corpus.store import Store
    from mosaic.errors import EngineError

    try:
        return Store(path)
    except EngineError as error:
        raise click.ClickException(str(error)) from None
    except sqlite3.Error as error:  # e.g. its -shm file cannot be written
        raise click.ClickException(f"cannot open {path}: {error}") from None


def _printed(answer: object) -> None:
    click.echo(json.dumps(answer, indent=1))


store_argument = click.argument("store_path", metavar="STORE", type=click.Path(exists=True, dir_okay=False))


@click.group()
def store() -> None:
    """Keep a results store for years: prune, back up, restore, info.

    \b
    mosaic store info STORE
    mosaic store prune STORE --before 2020-01-01 | --keep 10000
    mosaic store backup STORE DEST
    mosaic store restore BACKUP STORE
    """


@store.command()
@store_argument
def info(store_path: str) -> None:
    """What STORE holds: runs, groups, oldest and newest start, bytes, layout."""
    with _opened(store_path) as opened:
        _printed(opened.info())


def _iso_date(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A date or time as the logs' starts are written (compared as text): the whole value,
    not its first ten characters (``2020-01-01garbage`` passed until 2026-11-29)."""
    if value is not None:
        try:
            datetime.fromisoformat(value)
        except ValueError:
            raise click.BadParameter(
                f"{value!r}: give a date as YYYY-MM-DD (or YYYY-MM-DDTHH:MM:SSZ)"
            ) from None
    return value


@store.command()
@store_argument
@click.option(
    "--before",
    metavar="DATE",
    callback=_iso_date,
    help="Drop runs that started before DATE (YYYY-MM-DD, UTC); runs without a start are kept.",
)
@click.option(
    "--keep", type=click.IntRange(min=1), help="Drop each group's runs beyond its KEEP most recent."
)
def prune(store_path: str, before: str | None, keep: int | None) -> None:
    """Drop old runs from STORE; every count and profile follows, the file shrinks.

    Runs beside `mosaic serve`: a few thousand runs a transaction, then the
    freed pages given back in small steps.
    """
    if before is None and keep is None:
        raise click.UsageError("give --before DATE, --keep N, or both")
    with _opened(store_path) as opened:
        _printed({"dropped": opened.prune(before=before, keep=keep), "store": opened.info()})


def _copy(work: Callable[[], object], what: str) -> None:
    """Print what ``work`` copied; a damaged, newer or unreadable source, or a destination
    that cannot be written (no such folder, a full disk), stops the command (exit 1) with
    the reason, not a traceback (until 2026-11-29 SQLite's own errors escaped)."""
    from mosaic.errors import EngineError

    try:
        _printed(work())
    except EngineError as error:
        raise click.ClickException(str(error)) from None
    except (sqlite3.Error, OSError) as error:
        raise click.ClickException(f"{what}: {error}") from None


@store.command()
@store_argument
@click.argument("destination", metavar="DEST", type=click.Path(dir_okay=False))
def backup(store_path: str, destination: str) -> None:
    """Copy STORE to DEST as it is now, while `mosaic serve` answers and posts arrive.

    SQLite's online backup API from one snapshot: DEST holds every post
    acknowledged before the copy began. DEST is checked (integrity_check) and
    synced before it replaces any file of that name.
    """
    with _opened(store_path) as opened:
        _copy(lambda: opened.backup(destination), f"cannot back {store_path} up to {destination}")


@store.command()
@click.argument("backup_path", metavar="BACKUP", type=click.Path(exists=True, dir_okay=False))
@click.argument("store_path", metavar="STORE", type=click.Path(dir_okay=False))
def restore(backup_path: str, store_path: str) -> None:
    """Put BACKUP's contents into STORE (created if missing).

    In place through SQLite's backup API: a running `mosaic serve` on STORE
    answers from the backup's contents from then on. Runs recorded after the
    backup are gone from STORE: post their logs again (a post of a run
    already stored counts once).
    """
    from mosaic.corpus.store import restore as restore_store

    _copy(lambda: restore_store(backup_path, store_path), f"cannot restore {backup_path} into {store_path}")
