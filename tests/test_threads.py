"""Importing mosaic limits BLAS to one thread per process, unless the user set it."""

import os
import subprocess
import sys

PROBE = (
    "import mosaic, numpy, threadpoolctl; "
    "print([i['num_threads'] for i in threadpoolctl.threadpool_info() "
    "if i['internal_api'] == 'openblas'])"
)


def probe(**env) -> str:
    clean = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    return subprocess.run(
        [sys.executable, "-c", PROBE], env={**clean, **env}, check=True, capture_output=True, text=True
    ).stdout.strip()


def test_one_blas_thread_by_default_and_the_users_choice_kept():
    assert probe() == "[1]"
    assert probe(OPENBLAS_NUM_THREADS="2") == "[2]"
