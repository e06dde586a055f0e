"""Command-line options shared by the `mosaic` subcommands, and the config they build.

Kept apart from ``mosaic.cli`` so that subcommands living in other packages can
use them without importing the CLI entry point (no import cycle).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from mosaic.config import Config


def load_config(config_file: str | None, **overrides: Any) -> Config:
    """Config from an optional TOML file plus command-line overrides (None = not given).

    A bad key or value stops the command at start with click's usage error,
    naming the key, the value and what is allowed.
    """
    given = {k: v for k, v in overrides.items() if v is not None}
    try:
        cfg = Config.from_toml(config_file) if config_file else Config()
        return cfg.replace(**given) if given else cfg
    except ValueError as exc:
        raise click.UsageError(f"bad configuration: {exc}") from None


config_option = click.option(
    "--config",
    "config_file",
    type=click.Path(exists=True, dir_okay=False),
    help="TOML file overriding settings of mosaic.config.Config "
    "(flat keys or tables [method], [execution], [service], [display], [truth]).",
)
mount_option = click.option(
    "--mount",
    "mounts",
    multiple=True,
    metavar="PREFIX",
    help="Keep only files under this prefix (repeatable). Default: all files "
    "except Darshan pseudo-files and /proc, /sys, /dev.",
)
strict_option = click.option(
    "--strict", is_flag=True, default=None, help="Evict partial logs instead of flagging them."
)


Command = TypeVar("Command", bound=Callable[..., Any])


def log_and_output(output_help: str) -> Callable[[Command], Command]:
    """FILE (a log, or ARCHIVE/MEMBER of a tar archive) and ``-o/--output``: what
    `mosaic plot` and `mosaic explain` take, each saying what its output is."""

    def decorate(command: Command) -> Command:
        command = click.option(
            "-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help=output_help
        )(command)
        return click.argument("file", type=click.Path(dir_okay=False, path_type=Path))(command)

    return decorate
