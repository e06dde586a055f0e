"""Lower layers never import higher ones: batch (mosaic.corpus) knows nothing of the
HTTP service, and the trace nothing of the analyses built on it. Read from the code's
own import statements (those inside functions too), so the rule cannot drift."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "mosaic"


def imported(path: Path) -> set[str]:
    """Every module name `path` imports, absolute (the package uses no relative imports)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}: relative import"
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


@pytest.mark.parametrize(
    "lower, higher",
    [("corpus", "mosaic.service"), ("trace.py", "mosaic.analysis"), ("darshan", "mosaic.trace")],
)
def test_no_import_runs_back_up(lower, higher):
    place = PACKAGE / lower
    files = sorted(place.rglob("*.py")) if place.is_dir() else [place]
    assert files
    wrong = {
        f"{path.relative_to(PACKAGE)} imports {name}"
        for path in files
        for name in imported(path)
        if name == higher or name.startswith(higher + ".")
    }
    assert not wrong
