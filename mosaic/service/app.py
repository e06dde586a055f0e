"""The FastAPI application behind ``mosaic serve``: one store, one worker pool.

Routes live in :mod:`mosaic.service.routes` and reach what they need through
``app.state`` (``settings``, ``config``, ``store``, ``store_file``: the identity
of the store file as opened, :mod:`mosaic.service.storewatch`; ``pool``,
``metrics``, ``spool``: a private folder for large bodies, ``store_writes``: a
lock that makes a store write and the check before it one step), set here.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse

from mosaic.config import Config
from mosaic.corpus.store import Store
from mosaic.html.csp import policy
from mosaic.service.guard import CSP_HEADER, GuardMiddleware
from mosaic.service.handlers import install_handlers
from mosaic.service.metrics import Metrics
from mosaic.service.pool import WorkerPool
from mosaic.service.routes import router
from mosaic.service.security import Tokens
from mosaic.service.storewatch import StoreFile

SWAGGER_HOSTS = ("https://cdn.jsdelivr.net", "https://fastapi.tiangolo.com")  # its scripts, its icon


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
    app.state.store = Store(settings.store)
    try:
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
        docs_url=None,  # served below, with its policy
        redoc_url=None,
    )

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        """Swagger UI (from its CDN, as FastAPI serves it), under a policy that runs its
        scripts and the page's own inline one alone."""
        page = get_swagger_ui_html(openapi_url=str(app.openapi_url), title=f"{app.title} - Swagger UI")
        page.headers[CSP_HEADER.decode()] = policy(bytes(page.body).decode(), SWAGGER_HOSTS)
        return page

    app.state.settings = settings
    app.state.config = settings.config
    app.state.metrics = Metrics(settings.config)
    app.add_middleware(GuardMiddleware, tokens=settings.tokens, metrics=app.state.metrics)
    install_handlers(app)
    app.include_router(router)
    return app
