"""The core without its extras: `categorize` (and a run in one process) work with every
optional package absent, and a command that needs an extra names it and exits 2.

Each case runs `mosaic` in a fresh interpreter whose import system refuses the modules
of the extras (a `sys.meta_path` finder placed first), as an environment holding only
`pip install mosaic-io` would. .ci/wheel-smoke does the same from a real core-only venv.
"""

from __future__ import annotations

import ast
import json
import re
import sqlite3
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import mosaic
from mosaic.cli import LazyGroup
from mosaic.extras import EXTRA_MODULES, EXTRA_OF
from mosaic_testing.logs import REPO

LOG = REPO / "tests/data/darshan-logs-runtime/darshan-main/pub_two_series.darshan"
OPTIONAL = ",".join(EXTRA_OF)
# packages imported under another name
IMPORT_NAME = {
    "markdown-it-py": "markdown_it",
    "scikit-learn": "sklearn",
    "zlib-ng": "zlib_ng",
    "PyWavelets": "pywt",
}
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def import_names(requirements: list[str]) -> set[str]:
    """The top-level modules of pyproject.toml's requirement lines."""
    packages = {re.split(r"[<>=;\[ ]", req, maxsplit=1)[0] for req in requirements}
    return {IMPORT_NAME.get(package, package.replace("-", "_")) for package in packages}


# `mosaic` with the given top-level modules refused, as if not installed.
WITHOUT = """
import sys

blocked = set(sys.argv[1].split(","))


class Absent:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in blocked:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, Absent())
from mosaic.cli import main

main(sys.argv[2:], prog_name="mosaic")
"""


def mosaic_without(modules: str, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", WITHOUT, modules, *args], capture_output=True, text=True, timeout=120, cwd=cwd
    )


def test_categorize_needs_no_extra():
    done = mosaic_without(OPTIONAL, "categorize", "--explain", str(LOG))
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "ok"
    assert result["categories"] == mosaic.categorize(LOG)["categories"]
    assert result["reasons"]  # the explanations are core too


def test_a_run_in_one_process_needs_no_extra(tmp_path):
    done = mosaic_without(
        OPTIONAL, "run", str(LOG.parent), "--out", str(tmp_path), "--workers", "0", "--quiet"
    )
    assert done.returncode == 0, done.stderr
    traces = (tmp_path / "traces.jsonl").read_text().splitlines()
    assert len(traces) == 9  # the folder's nine logs (tests/data/PROVENANCE.md), one group each


def test_signatures_are_built_without_scikit_learn(tmp_path):
    """The 34 interference logs hold three groups of 8-18 runs: `mosaic run` builds their
    signatures (LOF included) with scikit-learn refused, as with it (mosaic's own LOF)."""
    logs = REPO / "tests/data/darshan-logs-interference/logs"
    done = mosaic_without("sklearn", "run", str(logs), "--out", str(tmp_path), "--workers", "0", "--quiet")
    assert done.returncode == 0, done.stderr
    db = sqlite3.connect(tmp_path / "store.sqlite")
    try:
        assert db.execute("SELECT count(*) FROM signatures").fetchone()[0] == 3
    finally:
        db.close()


def test_every_help_page_needs_no_extra():
    for name in LazyGroup.lazy:
        done = mosaic_without(OPTIONAL, name, "--help")
        assert done.returncode == 0 and "Exit status" in done.stdout, (name, done.stderr)


@pytest.mark.parametrize(
    ("args", "extra", "module"),
    [
        (("serve", "--store", "{tmp}/store.sqlite", "--create", "--port", "0"), "service", "uvicorn"),
        (("lookup", "--uid", "1", "--app", "/bin/x", "--server", "http://127.0.0.1:9"), "service", "httpx"),
        (("run", str(LOG.parent), "--out", "{tmp}/out", "--workers", "1", "--quiet"), "cluster", "dispy"),
        (("explain", str(LOG), "-o", "{tmp}/job.html"), "report", "PIL"),
        (("plot", str(LOG), "-o", "{tmp}/trace.png"), "report", "matplotlib"),
    ],
)
def test_a_command_whose_extra_is_missing_names_it_and_exits_2(tmp_path, args, extra, module):
    args = tuple(arg.format(tmp=tmp_path) for arg in args)
    done = mosaic_without(",".join(EXTRA_MODULES[extra]), *args)
    assert done.returncode == 2, done.stderr
    # the first module of the extra the command imports is the one named
    assert f"`mosaic {args[0]}` needs the [{extra}] extra (module {module} is not installed)" in done.stderr
    assert f"pip install 'mosaic-io[{extra}]'" in done.stderr
    assert "Traceback" not in done.stderr
    if args[0] == "run":
        assert "--workers 0" in done.stderr  # the way to run without it


def test_a_missing_module_of_no_extra_stays_a_traceback():
    # numpy is core: its absence is a broken install, not a choice, and the traceback says more
    done = mosaic_without("numpy", "categorize", str(LOG))
    assert done.returncode == 1 and "ModuleNotFoundError: No module named 'numpy'" in done.stderr


def test_every_package_of_an_extra_is_named_for_its_message():
    extras = PROJECT["optional-dependencies"]
    for extra, modules in EXTRA_MODULES.items():
        assert import_names(extras[extra]) <= set(modules), extra
    assert extras["all"] == [f"mosaic-io[{','.join(EXTRA_MODULES)}]"]
    assert "mosaic-io[all]" in extras["dev"]  # make run and make test install everything


def test_every_module_mosaic_imports_is_of_the_core_or_of_a_named_extra():
    # A module outside both (PIL, which mosaic/html/job.py imports and matplotlib brings,
    # was one until 2026-11-29) is a traceback in a core-only install, not a message.
    imported = set()
    for path in (REPO / "mosaic").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imported |= {alias.name.partition(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                imported.add(node.module.partition(".")[0])
    third_party = imported - set(sys.stdlib_module_names) - {"mosaic"}
    assert third_party - import_names(PROJECT["dependencies"]) - set(EXTRA_OF) == set()
    assert {"numpy", "PIL", "fastapi", "dispy"} <= third_party  # the scan sees imports at any depth
