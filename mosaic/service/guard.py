"""The ASGI guard in front of every route: bearer token first, then metrics."""

from __future__ import annotations

import hmac
import time

from mosaic.service.handlers import error_response
from mosaic.service.security import OPEN_PATHS, Tokens, bearer


class GuardMiddleware:
    """Bearer-token check and request metrics, as plain ASGI (cheap per request)."""

    def __init__(self, app, tokens: Tokens, metrics):
        self.app = app
        self.read = tokens.read.encode() if tokens.read else None
        self.metrics = metrics

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        began = time.perf_counter()
        status = [500]

        async def send_and_note(message):
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            if self._authorized(scope):
                await self.app(scope, receive, send_and_note)
            else:
                response = error_response(401, "unauthorized", "missing or wrong bearer token")
                response.headers["WWW-Authenticate"] = "Bearer"
                await response(scope, receive, send_and_note)
        finally:
            self.metrics.observe(scope, status[0], time.perf_counter() - began)

    def _authorized(self, scope) -> bool:
        if self.read is None or scope["path"] in OPEN_PATHS:
            return True
        return hmac.compare_digest(bearer(scope), self.read)
