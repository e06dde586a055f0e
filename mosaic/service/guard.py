"""The ASGI guard in front of every route: bearer token first, then metrics."""

from __future__ import annotations

import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mosaic.errors import ApiError
from mosaic.html.csp import NOTHING
from mosaic.service.handlers import error_response
from mosaic.service.metrics import Metrics
from mosaic.service.security import OPEN_PATHS, Tokens

CSP_HEADER = b"content-security-policy"


class GuardMiddleware:
    """Bearer-token check, request metrics, and a Content-Security-Policy that lets no
    answer act as a page (:data:`mosaic.html.csp.NOTHING`), as plain ASGI (cheap per request).

    The request's write permission is left in ``scope["state"]["may_write"]``
    (``request.state.may_write`` in a route): recording in the store needs it.
    """

    def __init__(self, app: ASGIApp, tokens: Tokens, metrics: Metrics) -> None:
        self.app = app
        self.tokens = tokens
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        began = time.perf_counter()
        status = [500]

        async def send_and_note(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
                headers = message.setdefault("headers", [])
                if not any(name.lower() == CSP_HEADER for name, _ in headers):  # /docs sets its own
                    message["headers"] = [*headers, (CSP_HEADER, NOTHING.encode())]
            await send(message)

        try:
            may_read, may_write = self.tokens.access(scope)
            scope.setdefault("state", {})["may_write"] = may_write
            if may_read or scope["path"] in OPEN_PATHS:
                await self.app(scope, receive, send_and_note)
            else:
                response = error_response(401, ApiError.UNAUTHORIZED, "missing or wrong bearer token")
                response.headers["WWW-Authenticate"] = "Bearer"
                await response(scope, receive, send_and_note)
        finally:
            self.metrics.observe(scope, status[0], time.perf_counter() - began)
