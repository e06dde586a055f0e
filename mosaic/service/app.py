"""The FastAPI application behind ``mosaic serve``: one store, one worker pool.

Routes live in :mod:`mosaic.service.routes` and reach what they need through
``app.state`` (``settings``, ``config``, ``store``, ``store_versions``, ``store_file``: the identity
of the store file as opened, :mod:`mosaic.service.storewatch`; ``pool``,
``metrics``, ``spool``: a private folder for large bodies, ``store_writes``: a
lock that makes a store write and the check before it one step), set here.
"""

from __future__ import annotations

import asyncio
import html
import shutil
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI
from fastapi.responses import HTMLResponse

from mosaic.config import Config
from mosaic.corpus.store import Store
from mosaic.service.guard import GuardMiddleware
from mosaic.service.handlers import install_handlers
from mosaic.service.metrics import Metrics
from mosaic.service.pool import WorkerPool
from mosaic.service.registry import router as registry_router
from mosaic.service.routes import router
from mosaic.service.security import Tokens
from mosaic.service.storewatch import StoreFile


@dataclass(frozen=True)
class ServiceSettings:
    store: str  # SQLite results store (mosaic.corpus.store)
    config: Config
    workers: int  # categorization processes
    tokens: Tokens = Tokens()


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Open the store and start (and warm) the workers before answering."""
    settings: ServiceSettings = app.state.settings
    config = settings.config
    app.state.store = Store(
        settings.store,
        durable=config.store_durable_posts,
        window=config.profile_window_runs,
        listing_seconds=config.store_listing_seconds,
    )
    try:
        app.state.store_versions = app.state.store.versions()  # /healthz shows them; a record adds its own
        app.state.store_file = StoreFile.opened(settings.store)
    except BaseException:
        app.state.store.close()
        raise
    app.state.pool = WorkerPool(settings.workers, settings.config)
    app.state.spool = tempfile.mkdtemp(prefix="mosaic-serve-")  # mode 700
    app.state.store_writes = asyncio.Lock()
    try:
        await app.state.pool.warm_up()
        yield
    finally:
        app.state.pool.close()
        app.state.store.close()
        app.state.store_file.close()  # after SQLite's connections: its locks held till then
        shutil.rmtree(app.state.spool, ignore_errors=True)


def create_app(settings: ServiceSettings) -> FastAPI:
    """The API over ``settings.store`` (store and pool are opened at startup)."""
    app = FastAPI(
        title="MOSAIC scheduler service",
        version="1",
        summary="I/O categories of HPC jobs from their Darshan logs",
        lifespan=lifespan,
        docs_url=None,  # FastAPI's page loads its scripts from a CDN: blank offline (reference_page)
        redoc_url=None,
    )

    app.state.settings = settings
    app.state.config = settings.config
    app.state.metrics = Metrics(settings.config)
    app.add_middleware(GuardMiddleware, tokens=settings.tokens, metrics=app.state.metrics)
    install_handlers(app)
    app.include_router(router)
    app.include_router(registry_router)  # the running jobs (/v1/running)

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        return HTMLResponse(reference_page(app.openapi()))

    return app


def reference_page(schema: dict[str, Any]) -> str:
    """The endpoints as one page with nothing to fetch: method, path, summary; the fields
    are in /openapi.json and docs/api.md."""
    rows = "".join(
        f"<tr><td>{html.escape(method.upper())}</td><td><code>{html.escape(path)}</code></td>"
        f"<td>{html.escape(operation.get('summary', ''))}</td></tr>"
        for path, operations in schema["paths"].items()
        for method, operation in operations.items()
    )
    title = html.escape(schema["info"]["title"])
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{title}</title></head>'
        f"<body><h1>{title}</h1><table><tr><th>method</th><th>path</th><th>what</th></tr>{rows}"
        '</table><p>Every field: <a href="openapi.json">openapi.json</a>; what they mean: docs/api.md '
        "in mosaic's source.</p></body></html>"
    )
