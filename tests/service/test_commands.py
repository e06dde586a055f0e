"""`mosaic serve` option rules and `mosaic lookup` against a store and a server."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from mosaic.analysis.categorize import categorize_trace
from mosaic.config import Config
from mosaic.corpus.store import Store
from mosaic.service.commands import lookup, serve
from mosaic.service.security import is_loopback
from mosaic.trace import trace_from_bytes

APP = "/apps/lmp"


@pytest.mark.parametrize(
    "host, expected",
    [
        ("127.0.0.1", True),
        ("127.8.0.1", True),
        ("::1", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("10.1.2.3", False),
        ("::", False),
        ("login1.cluster", False),
    ],
)
def test_is_loopback(host, expected):
    assert is_loopback(host) is expected


def test_non_loopback_host_requires_a_token_file(tmp_path, write_secret):
    result = CliRunner().invoke(serve, ["--store", str(tmp_path / "s.sqlite"), "--host", "0.0.0.0"])
    assert result.exit_code == 2
    assert "requires --token-file" in result.output
    write_secret(tmp_path / "empty", "\n")
    result = CliRunner().invoke(
        serve,
        ["--store", str(tmp_path / "s.sqlite"), "--host", "0.0.0.0", "--token-file", str(tmp_path / "empty")],
    )
    assert result.exit_code == 2 and "holds no token" in result.output
    assert not (tmp_path / "s.sqlite").exists()  # refused before opening anything


@pytest.fixture
def store_file(tmp_path, log_bytes):
    path = tmp_path / "store.sqlite"
    result = categorize_trace(trace_from_bytes(log_bytes, "a.darshan", Config()), Config())
    with Store(path) as store:
        store.record(result)
    return path


def test_lookup_in_a_store(store_file):
    found = CliRunner().invoke(lookup, ["--uid", "4242", "--app", APP, "--store", str(store_file), "--json"])
    assert found.exit_code == 0
    answer = json.loads(found.output)
    assert answer["runs"] == 1 and answer["representative"] == "a.darshan"
    assert answer["categories"] == ["read_insignificant", "write_on_start", "metadata_insignificant_load"]
    missing = CliRunner().invoke(
        lookup, ["--uid", "4243", "--app", APP, "--store", str(store_file), "--json"]
    )
    assert missing.exit_code == 1
    assert json.loads(missing.output)["error"] == "unknown_application"
    table = CliRunner().invoke(lookup, ["--uid", "4243", "--app", APP, "--store", str(store_file)])
    assert table.exit_code == 1 and table.output == f"no application '{APP}' for uid 4243 in the store\n"


def test_lookup_through_a_server(server, log_bytes, tmp_path, write_secret):
    with server.client() as client:
        client.post("/v1/categorize", params={"store": "true"}, content=log_bytes)
    write_secret(tmp_path / "token", server.token)
    args = ["--uid", "4242", "--app", APP, "--server", server.url, "--json"]
    found = CliRunner().invoke(lookup, args + ["--token-file", str(tmp_path / "token")])
    assert found.exit_code == 0, found.output
    assert json.loads(found.output)["application"] == APP
    unauthorized = CliRunner().invoke(lookup, args)
    assert unauthorized.exit_code == 3 and "401" in unauthorized.output
    unknown = CliRunner().invoke(
        lookup,
        [
            "--uid",
            "1",
            "--app",
            APP,
            "--server",
            server.url,
            "--token-file",
            str(tmp_path / "token"),
            "--json",
        ],
    )
    assert unknown.exit_code == 1
    assert json.loads(unknown.output)["error"] == "unknown_application"
    down = CliRunner().invoke(lookup, ["--uid", "1", "--app", APP, "--server", "http://127.0.0.1:9"])
    assert down.exit_code == 3 and "cannot reach" in down.output
    not_the_api = CliRunner().invoke(
        lookup,
        [
            "--uid",
            "1",
            "--app",
            APP,  # /docs/v1/... is HTML
            "--server",
            server.url + "/docs",
            "--token-file",
            str(tmp_path / "token"),
        ],
    )
    assert not_the_api.exit_code == 3 and "answered 404" in not_the_api.output


def test_lookup_needs_exactly_one_source(store_file):
    neither = CliRunner().invoke(lookup, ["--uid", "1", "--app", APP])
    both = CliRunner().invoke(
        lookup, ["--uid", "1", "--app", APP, "--store", str(store_file), "--server", "http://127.0.0.1:9"]
    )
    assert neither.exit_code == both.exit_code == 2


def test_lookup_reads_what_a_batch_run_stored(tmp_path, log_factory):
    """`mosaic run` fills the store's lookup tables; lookup (and the API) read them."""
    from mosaic.cli import main

    corpus = tmp_path / "logs"
    corpus.mkdir()
    (corpus / "a.darshan").write_bytes(log_factory(write_bytes=2e8, job_id=61, uid=6060))
    (corpus / "b.darshan").write_bytes(
        log_factory(write_bytes=3e8, job_id=62, uid=6060, write_window=(90.0, 99.0))
    )
    run = CliRunner().invoke(
        main, ["run", str(corpus), "--out", str(tmp_path / "out"), "--workers", "0", "--quiet"]
    )
    assert run.exit_code == 0, run.output
    found = CliRunner().invoke(
        lookup, ["--uid", "6060", "--app", APP, "--store", str(tmp_path / "out" / "store.sqlite"), "--json"]
    )
    assert found.exit_code == 0, found.output
    answer = json.loads(found.output)
    assert answer["runs"] == 2 and answer["representative"] == "b.darshan"  # the heavier run
    assert answer["categories"] == ["read_insignificant", "write_on_end", "metadata_insignificant_load"]
