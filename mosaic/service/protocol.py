"""uvicorn's h11 HTTP protocol, hardened against slow and oversized requests.

Why h11 and not httptools (uvicorn's default when installed): h11 refuses a
request head larger than ``h11_max_incomplete_event_size`` as soon as that
many bytes are buffered, while httptools buffers any header size (a 160 MB
header blocked the event loop for 51 s). uvicorn answers h11's refusal with
a 400; this protocol answers 431, as RFC 6585 asks. Neither parser bounds
time, so this protocol adds, per connection:

* a deadline: the request head must arrive within ``request_timeout`` of
  its first byte (or of the connection), then the body within as much again;
  a late request is answered 408 and the connection closed (slowloris,
  short ``Content-Length``, never-ending chunked bodies);
* a cap on open connections: past ``max_connections``, the oldest
  connection still waiting for a request head (idle keep-alive or slow) is
  dropped, so slow clients cannot hold every file descriptor and a healthy
  client, which sends its head at once, always gets in.
"""

from __future__ import annotations

import asyncio
import json

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from mosaic.config import Config
from mosaic.service.errors import error_body


def raw_response(status: int, phrase: str, error: str, detail: str) -> bytes:
    """A whole ``Connection: close`` JSON error response, written past h11's state machine."""
    body = json.dumps(error_body(error, detail)).encode()
    return (
        f"HTTP/1.1 {status} {phrase}\r\ncontent-type: application/json\r\n"
        f"connection: close\r\ncontent-length: {len(body)}\r\n\r\n"
    ).encode() + body


class GuardedH11Protocol(H11Protocol):
    """Set by :func:`protocol_class`: limits, and the connections awaiting a head (oldest first)."""

    request_timeout: float
    max_connections: int
    max_header_bytes: int
    awaiting: dict[
        GuardedH11Protocol, None
    ]  # connection -> None, in arrival order (a dict is an ordered set)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[arg-type]  # uvicorn's own annotation is narrower
        self.deadline: asyncio.TimerHandle | None = None
        self.head_bytes = 0
        self._await_head()
        if len(self.connections) > self.max_connections:
            oldest = next(iter(self.awaiting))
            oldest.drop(
                503,
                "Service Unavailable",
                "too_many_connections",
                f"more than {self.max_connections} connections; oldest idle dropped",
            )

    def data_received(self, data: bytes) -> None:
        if self.conn.their_state is h11.IDLE:
            self.head_bytes += len(data)
            if self.deadline is None:  # first bytes after an idle keep-alive
                self._arm()
        super().data_received(data)
        if self in self.awaiting and self.conn.their_state is not h11.IDLE:
            del self.awaiting[self]  # head complete: the body gets its own deadline
            self.head_bytes = 0
            self._arm()
        if self.conn.their_state is h11.DONE and self.deadline is not None:
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.awaiting[self] = None  # idle keep-alive: uvicorn's keep-alive timer runs

    def connection_lost(self, exc: Exception | None) -> None:
        self.awaiting.pop(self, None)
        if self.deadline is not None:
            self._disarm()
        super().connection_lost(exc)

    def send_400_response(self, msg: str) -> None:
        if self.head_bytes > self.max_header_bytes:
            self.drop(
                431,
                "Request Header Fields Too Large",
                "header_too_large",
                f"request head over {self.max_header_bytes} bytes",
            )
        else:
            super().send_400_response(msg)

    def drop(self, status: int, phrase: str, error: str, detail: str) -> None:
        """Answer (unless a response has begun) and close the connection."""
        if not self.transport.is_closing():
            if self.cycle is None or not self.cycle.response_started:
                self.transport.write(raw_response(status, phrase, error, detail))
            self.transport.close()
        self.awaiting.pop(self, None)

    def _await_head(self) -> None:
        self.awaiting[self] = None
        self._arm()

    def _arm(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
        self.deadline = self.loop.call_later(self.request_timeout, self._late)

    def _disarm(self) -> None:
        assert self.deadline is not None  # armed
        self.deadline.cancel()
        self.deadline = None

    def _late(self) -> None:
        self.deadline = None
        part = "head" if self.conn.their_state is h11.IDLE else "body"
        self.drop(
            408,
            "Request Timeout",
            "request_timeout",
            f"request {part} not received within {self.request_timeout:g} s",
        )


def protocol_class(config: Config) -> type[GuardedH11Protocol]:
    """The protocol class of one server, with its limits and its own connection registry."""
    return type(
        "MosaicH11Protocol",
        (GuardedH11Protocol,),
        {
            "request_timeout": config.service_request_timeout_seconds,
            "max_connections": config.service_max_connections,
            "max_header_bytes": config.service_max_header_bytes,
            "awaiting": {},
        },
    )
