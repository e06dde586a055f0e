"""The I/O signature (docs/method.md 3.12) through a real `mosaic serve`: GET
/v1/applications carries it in brief, or says why a group has none; the OpenAPI schema
documents it."""

from __future__ import annotations

from pathlib import Path

import pytest

from mosaic.config import DEFAULT
from mosaic.corpus.pipeline import run
from tests.service.conftest import TOKEN, launch, stop_server, wait_ready

LOGS = Path(__file__).parents[1] / "data" / "darshan-logs-interference" / "logs"
PHASE = 2 * 24 * 2**20


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    out = tmp_path_factory.mktemp("signature-run")
    run([LOGS], out, DEFAULT, workers=0)
    started = launch(tmp_path_factory.mktemp("signature-serve"), TOKEN, store=out / "store.sqlite")
    try:
        yield wait_ready(started)
    finally:
        stop_server(started)


def test_the_application_answer_carries_its_signature(served):
    with served.client() as client:
        answer = client.get("/v1/applications", params={"uid": 0, "app": "/opt/mosaic-ifs/bin/lmp_restart"})
    assert answer.status_code == 200
    shape = answer.json()["signature"]
    assert shape["reason"] is None
    writes = [b for b in shape["signature"]["bursts"] if b["direction"] == "write"]
    assert len(writes) == 4 and all(abs(b["bytes"] / PHASE - 1) < 0.05 for b in writes)
    assert "normalized" not in shape["signature"]  # the curves stay in the store


def test_the_schema_documents_the_signature(served):
    with served.client() as client:
        models = client.get("/openapi.json").json()["components"]["schemas"]
    assert "signature" in models["ApplicationAnswer"]["properties"]
    assert "too few runs" in models["SignatureAnswer"]["properties"]["reason"]["description"]
