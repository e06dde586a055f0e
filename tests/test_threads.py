"""Importing mosaic limits BLAS to one thread per process, unless the user set it.

Whichever BLAS numpy was built with (OpenBLAS, MKL, ...): the probe lists every BLAS
threadpoolctl finds, not OpenBLAS alone, and the user's choice is set for each library.
"""

import json
import os
import subprocess
import sys

PROBE = (
    "import json, os, mosaic, numpy, threadpoolctl; "
    "print(json.dumps([[i['num_threads'] for i in threadpoolctl.threadpool_info() "
    "if i['user_api'] == 'blas'], os.environ.get('OPENBLAS_NUM_THREADS')]))"
)


def probe(**env: str) -> tuple[list[int], str | None]:
    clean = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    out = subprocess.run(
        [sys.executable, "-c", PROBE], env={**clean, **env}, check=True, capture_output=True, text=True
    ).stdout
    threads, variable = json.loads(out)
    return threads, variable


def test_one_blas_thread_by_default_and_the_users_choice_kept():
    threads, variable = probe()
    assert threads and set(threads) == {1} and variable == "1"
    threads, variable = probe(OPENBLAS_NUM_THREADS="2", MKL_NUM_THREADS="2")
    assert variable == "2"  # not overwritten
    # a BLAS caps its threads at the CPUs it sees: the count is 2 wherever there are 2
    assert set(threads) == {min(2, os.cpu_count() or 1)}
