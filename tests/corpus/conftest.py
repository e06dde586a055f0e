"""Fixtures of the batch-pipeline tests: a small generated year and its reference run."""

import pytest

from mosaic.config import Config
from mosaic.corpus.pipeline import run
from mosaic.synth.year import generate_year

CORPUS_LOGS = 240


@pytest.fixture(scope="session")
def year_corpus(tmp_path_factory):
    """A Blue-Waters-like corpus (folders, daily tar.gz archives, invalid logs)."""
    root = tmp_path_factory.mktemp("year")
    generate_year(root, CORPUS_LOGS, seed=7, archive_share=0.2)
    return root


@pytest.fixture(scope="session")
def small_config():
    """Small batches so that a small corpus still makes many dispy jobs."""
    return Config(batch_size=16, categorize_batch_size=16, trace_timeout_seconds=20.0)


@pytest.fixture(scope="session")
def reference_run(year_corpus, small_config, tmp_path_factory):
    """The in-process (`--workers 0`) run every engine must reproduce."""
    out = tmp_path_factory.mktemp("reference")
    run([year_corpus], out, small_config, workers=0)
    return out


@pytest.fixture(scope="session")
def reference_all_runs(year_corpus, small_config, tmp_path_factory):
    out = tmp_path_factory.mktemp("reference_all")
    run([year_corpus], out, small_config.replace(all_runs=True), workers=0)
    return out
