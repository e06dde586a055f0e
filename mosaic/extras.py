"""The optional parts of mosaic-io, and the message when one is missing.

The core (numpy, scipy, scikit-learn, PyWavelets, click, tqdm, zlib-ng) reads and
categorizes logs; each extra of pyproject.toml adds what one kind of user
needs. A command that meets a module of a missing extra stops with status 2
and names the extra to install (:class:`MissingExtra`), instead of a traceback.
"""

from __future__ import annotations

import click

# The top-level modules mosaic imports from each extra's packages (and from what they
# bring: starlette and pydantic with fastapi, h11 with uvicorn, PIL and cycler with
# matplotlib); tests/test_extras.py checks every package pyproject.toml lists in an extra,
# and every module mosaic/ imports outside the core, is named here.
EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "service": (
        "fastapi",
        "starlette",
        "pydantic",
        "uvicorn",
        "h11",
        "httpx",
        "pebble",
        "prometheus_client",
        "tabulate",
        "uvloop",
        "httptools",
    ),
    "cluster": ("dispy", "psutil"),
    "report": ("matplotlib", "PIL", "cycler", "seaborn", "pandas", "markdown_it"),
}
EXTRA_OF = {module: extra for extra, modules in EXTRA_MODULES.items() for module in modules}


class MissingExtra(click.ClickException):
    """A command needs a package of an extra that is not installed (exit status 2)."""

    exit_code = 2


def missing_extra(error: ModuleNotFoundError, command: str) -> MissingExtra | None:
    """The message for ``error`` when it is a module of an extra; None for any other
    module (a broken install, a defect: the traceback is the better report)."""
    module = (error.name or "").partition(".")[0]
    extra = EXTRA_OF.get(module)
    if extra is None:
        return None
    hint = " (or --workers 0: one process, no dispy)" if command == "run" and extra == "cluster" else ""
    return MissingExtra(
        f"`mosaic {command}` needs the [{extra}] extra (module {module} is not installed): "
        f"pip install 'mosaic-io[{extra}]'{hint}"
    )
