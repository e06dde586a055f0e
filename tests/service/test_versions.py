"""The service says which code answers and which versions of mosaic its store's labels
come from (docs/release.md): /healthz carries them, and storing a result adds its own."""

from __future__ import annotations

import mosaic
from mosaic.config import Config
from mosaic.corpus.store import Store

from .conftest import TOKEN, launch, stop_server, wait_ready


def test_healthz_names_the_version_and_the_versions_the_store_mixes(tmp_path, log_bytes):
    store = tmp_path / "older.sqlite"
    with Store(store) as older:
        assert older.versions() == []
        assert older.versions(adding="0.1.0") == ["0.1.0"]  # as a run of 0.1.0 would have left it
    server = wait_ready(launch(tmp_path, TOKEN, store=store))
    try:
        with server.client() as client:
            expected = {
                "status": "ok",
                "workers": 2,
                "version": mosaic.__version__,
                "config_hash": Config.from_toml(tmp_path / "service.toml").hash(),
                "store_versions": ["0.1.0"],
            }
            assert client.get("/healthz").json() == expected
            stored = client.post(
                "/v1/categorize",
                content=log_bytes,
                params={"store": "true"},
                headers={"Content-Type": "application/octet-stream"},
            )
            assert stored.status_code == 200, stored.text
            mixed = ["0.1.0", mosaic.__version__]
            assert client.get("/healthz").json() == {**expected, "store_versions": mixed}
            client.post("/v1/categorize", content=log_bytes, params={"store": "true"})
            assert client.get("/healthz").json()["store_versions"] == mixed  # each version once
    finally:
        stop_server(server)
    with Store(store) as read:
        assert read.versions() == mixed  # kept in the store's meta table
