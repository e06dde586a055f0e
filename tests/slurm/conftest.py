"""The real Slurm of mosaic_testing.slurm, once for the tests of this folder (started by the
first test that asks for it, stopped at the end of the run whatever happened)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from mosaic_testing.slurm import SlurmCluster, missing, start_cluster


@pytest.fixture(scope="session")
def slurm_cluster() -> Iterator[SlurmCluster]:
    why = missing()
    if why:
        pytest.skip(why)
    cluster = start_cluster()
    try:
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(cluster.folder, ignore_errors=True)
