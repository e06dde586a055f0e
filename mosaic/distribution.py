"""Which distribution the imported ``mosaic`` package belongs to, and its version.

The import name ``mosaic`` is also taken by unrelated PyPI distributions
(docs/release.md says why we keep it). Two of them installed in one
environment write into one ``mosaic/`` folder, and the one installed last
owns ``mosaic/__init__.py``: ``mosaic --version`` names every distribution
that claims the name, ``mosaic.cli`` refuses to start on a package that is
not ours, and importing ours warns when the installed metadata disagree with
the code imported (another copy earlier on ``sys.path``, a stale editable
install).
"""

from __future__ import annotations

import importlib.metadata
import os
import sys
import warnings

DISTRIBUTION = "mosaic-io"
IMPORT_NAME = "mosaic"


class ShadowWarning(UserWarning):
    """The ``mosaic`` package imported is not the one ``mosaic-io``'s metadata describe."""


def installed_version() -> str | None:
    """The version pip recorded for mosaic-io (None: not installed, a source folder on
    ``sys.path``). A metadata lookup, ~1 ms."""
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return None


def other_owners() -> list[str]:
    """Every other installed distribution that installs the import name ``mosaic``, as
    "name version". Reads every distribution's file list (~0.5 s): only for
    ``--version`` and when something is already wrong."""
    names = importlib.metadata.packages_distributions().get(IMPORT_NAME, [])
    others = {name for name in names if _canonical(name) != DISTRIBUTION}
    return sorted(f"{name} {importlib.metadata.version(name)}" for name in others)


def _canonical(name: str) -> str:
    """PEP 503 name: mosaic_io, Mosaic.IO and mosaic-io are one distribution."""
    return "-".join(name.lower().replace("_", "-").replace(".", "-").split("-"))


def problem() -> str | None:
    """What is wrong with the ``mosaic`` package imported, or None when it is mosaic-io's
    at the version its metadata record. Cheap when nothing is wrong."""
    package = sys.modules[IMPORT_NAME]
    where = os.path.dirname(getattr(package, "__file__", None) or "?")
    installed = installed_version()
    if getattr(package, "DISTRIBUTION", None) != DISTRIBUTION:
        found = f"the `{IMPORT_NAME}` package imported from {where} is not {DISTRIBUTION}'s"
    elif installed not in (None, package.__version__):
        found = (
            f"{DISTRIBUTION} {installed} is installed, but the `{IMPORT_NAME}` package imported "
            f"from {where} is {package.__version__}"
        )
    else:
        return None
    return f"{found}; {_remedy(other_owners())}"


def _remedy(others: list[str]) -> str:
    """What to do about it: one distribution of the name per environment, reinstalled."""
    if others:
        return (
            f"{', '.join(others)} also install{'s' if len(others) == 1 else ''} the import name "
            f"`{IMPORT_NAME}`: keep one per environment (pip uninstall the other, then "
            f"pip install --force-reinstall {DISTRIBUTION})"
        )
    return f"reinstall it (pip install --force-reinstall {DISTRIBUTION}, or `make venv` in a checkout)"


def warn_if_shadowed() -> None:
    """At import: a warning when the metadata installed disagree with the code imported."""
    found = problem()
    if found is not None:
        warnings.warn(found, ShadowWarning, stacklevel=2)


def refuse_foreign_package() -> None:
    """Stop (status 2) when the ``mosaic`` package imported is another distribution's:
    our modules would run under its ``__init__``."""
    if getattr(sys.modules[IMPORT_NAME], "DISTRIBUTION", None) != DISTRIBUTION:
        sys.stderr.write(f"mosaic: {problem()}\n")
        raise SystemExit(2)


def version_text() -> str:
    """``mosaic --version``: the version, where the package was imported from, and any other
    distribution that installs the same import name."""
    package = sys.modules[IMPORT_NAME]
    where = os.path.dirname(getattr(package, "__file__", None) or "?")
    version = getattr(package, "__version__", "?")
    installed = installed_version()
    lines = [f"{DISTRIBUTION} {version} (import name `{IMPORT_NAME}`, from {where})"]
    if installed is None:
        lines.append(f"{DISTRIBUTION} is not installed: this is a source folder on sys.path")
    elif installed != version:
        lines.append(f"warning: the metadata installed say {DISTRIBUTION} {installed}")
    others = other_owners()
    if others:
        lines.append(f"warning: {_remedy(others)}")
    return "\n".join(lines)
