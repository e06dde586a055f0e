"""Where the real third-party logs are."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[3]  # tests/support/mosaic_testing/logs.py
TEST_DATA = REPO / "tests" / "data"
REAL_LOGS = TEST_DATA / "darshan-logs"


def real_logs() -> list[Path]:
    """The real Darshan logs in tests/data/darshan-logs (tests/data/PROVENANCE.md)."""
    return sorted(REAL_LOGS.rglob("*.darshan")) if REAL_LOGS.is_dir() else []


def pydarshan_example_logs() -> list[Path]:
    """Example logs shipped inside pydarshan's wheel (darshan-logs package data)."""
    try:
        import darshan
    except ImportError:
        return []
    root = Path(darshan.__file__).parent
    return sorted(root.rglob("*.darshan"))
