"""What a packager checks: one version everywhere, the licence in the metadata, `python -m
mosaic` equal to `mosaic`, and the import name `mosaic` when another distribution takes it.

The wheel and the sdist themselves are built, installed and checked by .ci/wheel-smoke.
"""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import mosaic
from mosaic_testing.logs import REPO

MOSAIC = str(Path(sys.executable).with_name("mosaic"))
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def run(*command: str, env_path: Path | None = None) -> subprocess.CompletedProcess[str]:
    """A command in a fresh process; `env_path` goes first on PYTHONPATH (and is the current
    folder, which `python -m` puts first)."""
    env = (
        {"PATH": "/usr/bin:/bin"}
        if env_path is None
        else {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(env_path)}
    )
    return subprocess.run(list(command), capture_output=True, text=True, timeout=120, env=env, cwd=env_path)


def fake_distribution(folder: Path, name: str, version: str, top_level: str = "mosaic") -> None:
    """The metadata pip leaves for an installed distribution, and nothing else."""
    info = folder / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "top_level.txt").write_text(top_level + "\n")


def test_one_version_in_the_code_the_metadata_and_the_command():
    assert re.fullmatch(r"\d+\.\d+\.\d+", mosaic.__version__)
    assert importlib.metadata.version("mosaic-io") == mosaic.__version__
    assert PYPROJECT["dynamic"] == ["version"] and "version" not in PYPROJECT
    done = run(MOSAIC, "--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == (
        f"mosaic-io {mosaic.__version__} (import name `mosaic`, from {Path(mosaic.__file__).parent})"
    )
    assert "warning" not in done.stdout and not done.stderr


def test_python_dash_m_mosaic_is_the_mosaic_command():
    for args in (["--version"], ["--help"], ["categorize", "--help"]):
        module, script = run(sys.executable, "-m", "mosaic", *args), run(MOSAIC, *args)
        assert (module.returncode, module.stdout) == (script.returncode, script.stdout) == (0, script.stdout)
    assert run(sys.executable, "-m", "mosaic", "--help").stdout.startswith("Usage: mosaic [OPTIONS]")
    log = REPO / "tests/data/darshan-logs/release_logs/mpi-io-test-x86_64-3.4.7.darshan"
    module, script = (
        run(sys.executable, "-m", "mosaic", "categorize", str(log)),
        run(MOSAIC, "categorize", str(log)),
    )
    assert module.returncode == script.returncode == 0 and module.stdout == script.stdout


def test_the_licence_is_bsd_3_clause_in_the_repository_and_the_metadata():
    assert (REPO / "LICENSE").read_text().startswith("BSD 3-Clause License\n\nCopyright (c) 2026, The MOSAIC")
    assert PYPROJECT["license"] == "BSD-3-Clause"
    metadata = importlib.metadata.metadata("mosaic-io")
    assert metadata["License-Expression"] == "BSD-3-Clause"
    assert sorted(metadata.get_all("License-File") or []) == sorted(PYPROJECT["license-files"])
    notices = (REPO / "THIRD-PARTY-NOTICES.md").read_text()
    assert "uPlot" in notices and "mosaic/html/assets/uPlot.LICENSE" in notices
    assert (REPO / "mosaic/html/assets/uPlot.LICENSE").read_text().startswith("The MIT License")


def test_the_metadata_a_packager_reads():
    metadata = importlib.metadata.metadata("mosaic-io")
    assert metadata["Requires-Python"] == ">=3.11"
    assert metadata["Author"] and metadata["Maintainer"]
    assert "Programming Language :: Python :: 3.11" in (metadata.get_all("Classifier") or [])
    assert metadata["Description-Content-Type"] == "text/markdown"
    assert set(metadata.get_all("Provides-Extra") or []) == {"service", "cluster", "report", "all", "dev"}
    citation = (REPO / "CITATION.cff").read_text()
    assert f'version: "{mosaic.__version__}"' in citation  # bumped with the release
    assert "MOSAIC: Detection and Categorization of I/O Patterns in HPC Applications" in citation
    assert "10.1109/SCW63240.2024.00172" in citation


def test_version_names_another_distribution_of_the_import_name(tmp_path):
    fake_distribution(tmp_path, "othermosaic", "1.4")
    done = run(MOSAIC, "--version", env_path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1] == (
        "warning: othermosaic 1.4 also installs the import name `mosaic`: keep one per environment "
        "(pip uninstall the other, then pip install --force-reinstall mosaic-io)"
    )


def test_a_foreign_mosaic_package_is_named_and_refused(tmp_path):
    # Two distributions pip installed into one mosaic/ folder, the other's __init__.py last:
    # our modules are found beside a package that is not ours.
    foreign = tmp_path / "mosaic"
    foreign.mkdir()
    (foreign / "__init__.py").write_text(f"__path__.append({str(Path(mosaic.__file__).parent)!r})\n")
    fake_distribution(tmp_path, "othermosaic", "1.4")
    for command in ([MOSAIC, "categorize", "x.darshan"], [sys.executable, "-m", "mosaic", "--version"]):
        done = run(*command, env_path=tmp_path)
        assert done.returncode == 2
        assert done.stderr == (
            f"mosaic: the `mosaic` package imported from {foreign} is not mosaic-io's; othermosaic 1.4 "
            "also installs the import name `mosaic`: keep one per environment (pip uninstall the "
            "other, then pip install --force-reinstall mosaic-io)\n"
        )


def test_importing_warns_when_the_installed_metadata_disagree(tmp_path):
    # metadata of another mosaic-io version found first: a stale install, another copy
    fake_distribution(tmp_path, "mosaic-io", "0.0.9")
    done = run(sys.executable, "-c", "import mosaic", env_path=tmp_path)
    assert done.returncode == 0
    assert (
        f"ShadowWarning: mosaic-io 0.0.9 is installed, but the `mosaic` package imported from "
        f"{Path(mosaic.__file__).parent} is {mosaic.__version__}; reinstall it" in done.stderr
    )
    assert "import mosaic" not in run(sys.executable, "-c", "import mosaic").stderr  # nothing when it agrees


def test_the_debian_table_names_every_package_of_the_core_and_the_extras():
    """docs/release.md's bookworm table lacked markdown-it-py, which [report] gained on 2026-11-29."""
    text = (REPO / "docs/release.md").read_text()
    table = text[text.index("## Debian 12 (bookworm)") :].split("\n\n")[2]
    named = {line.split("|")[1].split("`")[0].strip() for line in table.splitlines()[2:]}
    extras = PYPROJECT["optional-dependencies"]
    needed = PYPROJECT["dependencies"] + extras["service"] + extras["cluster"] + extras["report"]
    assert {re.split(r"[<>=;\[ ]", requirement, maxsplit=1)[0] for requirement in needed} == named


def test_the_latest_changelog_release_is_the_version_and_the_citations_date():
    """docs/release.md's rule: a CHANGELOG release, `__version__` and CITATION.cff move together."""
    releases = re.findall(
        r"^## (\d+\.\d+\.\d+) — (\d{4}-\d{2}-\d{2})$", (REPO / "CHANGELOG.md").read_text(), re.M
    )
    assert releases and releases[0][0] == mosaic.__version__
    assert f'date-released: "{releases[0][1]}"' in (REPO / "CITATION.cff").read_text()
