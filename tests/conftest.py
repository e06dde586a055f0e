"""Shared fixtures; plain helpers live in tests/helpers.py."""

import pytest

from helpers import real_logs


@pytest.fixture(scope="session")
def shared_logs():
    logs = real_logs()
    if not logs:
        pytest.skip("../shared/darshan-logs not present")
    return logs
