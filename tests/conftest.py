"""Shared fixtures; plain helpers live in tests/support/mosaic_testing/."""

import pytest

from mosaic_testing.logs import real_logs


@pytest.fixture(scope="session")
def shared_logs():
    logs = real_logs()
    if not logs:
        pytest.skip("tests/data/darshan-logs not present")
    return logs
