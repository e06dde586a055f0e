"""Shared fixtures; plain helpers live in tests/support/mosaic_testing/."""

import resource
from collections.abc import Iterator

import pytest

from mosaic_testing.logs import real_logs


@pytest.fixture(scope="session")
def shared_logs():
    logs = real_logs()
    if not logs:
        pytest.skip("tests/data/darshan-logs not present")
    return logs


@pytest.fixture(autouse=True)
def _address_space_restored() -> Iterator[None]:
    """A command run in this process (CliRunner: `mosaic categorize`, `explain`, `plot`) caps its
    address space (mosaic.limits.limit_memory); put back after each test, so that no later test
    runs under it (a chromium launched under a few GB of address space dies at start)."""
    before = resource.getrlimit(resource.RLIMIT_AS)
    yield
    resource.setrlimit(resource.RLIMIT_AS, before)
