"""The held-out generator lives in ``benchmarks/`` (a script package beside
``mosaic``), which pytest's ``pythonpath`` does not list: put the repository
root on the path for these tests only."""

import sys
from pathlib import Path

ROOT = str(Path(__file__).resolve().parents[2])
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
