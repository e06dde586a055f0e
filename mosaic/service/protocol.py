"""uvicorn's h11 HTTP protocol, hardened against slow, oversized and ambiguous requests.

Why h11 and not httptools (uvicorn's default when installed): h11 parses a
head only once it is complete and can be told where the head ends, while
httptools buffers any header size (a 160 MB header blocked the event loop
for 51 s). h11 is lenient where RFC 9112 allows a server to be (bare LF line
ends, obs-fold continuation lines, a request with both ``Content-Length`` and
``Transfer-Encoding``: it takes the chunked framing and keeps the connection),
and it bounds only an *incomplete* head, so a whole head that arrives in one
read passes at any size. :class:`StrictHeadBuffer`, the buffer h11 extracts
heads from, refuses all of these before h11 reads the head: 431 past
``max_header_bytes`` whatever the read boundaries, 400 for the rest, and the
connection closes (no request hidden behind an ambiguous body is answered).

Neither parser bounds time, so this protocol adds, per connection:

* a deadline: the request head must arrive within ``request_timeout`` of
  its first byte (or of the connection), then the body within as much again;
  a late request is answered 408 and the connection closed (slowloris,
  short ``Content-Length``, never-ending chunked bodies);
* a write deadline: the transport buffers nothing past what the socket takes
  (its high-water mark is 0), so ``pause_writing`` means "the client is not
  reading"; when none of the unsent bytes drain for ``write_timeout``, the
  connection is aborted (a client that pipelines requests and never reads
  its answers held its connection forever: a response stuck behind TCP
  back-pressure counted as being answered, and a close waited for the
  unsent bytes to leave);
* a bound on pipelined requests: past ``max_pipelined`` requests already
  received behind the one answered, the next gets 429 and the connection
  closes (the work one write of a client can queue is bounded);
* a cap on open connections, shared out per source address: past
  ``max_connections`` a connection is dropped (503 when it owes bytes, aborted
  when it does not read), always from the address holding the most
  connections, so many connections from one address cannot lock out a client
  from another. A newcomer has sent nothing yet (its request may sit unread in
  the kernel), so it may displace only a connection that has sent nothing
  either (idle reconnectors are shed first: before 2026-11-29, 80 connections
  that reconnected at once as they were dropped made most /healthz probes
  fail on a cap of 40); when there is none it is admitted one over the cap,
  and once its first bytes arrive it takes the place of the connection of the
  heaviest address that has made no progress for longest (idle keep-alive or
  a slow head, the rest of a body, answers it does not read, a pipelined
  request; counted from its last byte received, or from when its answers
  stopped draining). A connection whose request is being answered, and which
  reads, is never dropped: only when every other connection is one is a
  client that has spoken refused. An upload still arriving is thus never
  dropped for connections that have sent nothing since.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from dataclasses import dataclass, replace

import h11
from h11._receivebuffer import ReceiveBuffer, blank_line_regex  # the buffer h11 parses from
from uvicorn.protocols.http.h11_impl import H11Protocol

from mosaic.config import Config
from mosaic.errors import ApiError
from mosaic.service.errors import error_body
from mosaic.service.security import client_source

OWING = (h11.IDLE, h11.SEND_BODY)  # client states in which the server waits for its bytes


@dataclass(frozen=True)
class Refusal:
    """A request answered with an error and its connection closed."""

    status: int
    phrase: str
    error: ApiError
    detail: str


MALFORMED = Refusal(400, "Bad Request", ApiError.BAD_REQUEST, "malformed request")


def raw_response(refusal: Refusal) -> bytes:
    """A whole ``Connection: close`` JSON error response, written past h11's state machine."""
    body = json.dumps(error_body(refusal.error, refusal.detail)).encode()
    return (
        f"HTTP/1.1 {refusal.status} {refusal.phrase}\r\ncontent-type: application/json\r\n"
        f"connection: close\r\ncontent-length: {len(body)}\r\n\r\n"
    ).encode() + body


class StrictHeadBuffer(ReceiveBuffer):
    """h11's receive buffer, checking each head (and trailer section) as h11 extracts it.

    The check sees the raw bytes h11 is about to split into lines, so it
    holds for pipelined requests and any read boundaries; a refused head
    leaves its :class:`Refusal` in ``refusal`` and raises h11's protocol error.
    """

    def __init__(self, max_bytes: int) -> None:
        super().__init__()
        self.max_bytes = max_bytes
        self.refusal: Refusal | None = None

    def maybe_extract_lines(self) -> list[bytearray] | None:
        data = self._data
        if data[:1] == b"\n":
            self._refuse(replace(MALFORMED, detail="bare LF line end"))
        if data[:2] != b"\r\n":  # not h11's "no request line" / "no trailers" case
            match = blank_line_regex.search(data, self._multiple_lines_search)
            size = len(data) if match is None else match.end()
            if size > self.max_bytes:
                self._refuse(
                    Refusal(
                        431,
                        "Request Header Fields Too Large",
                        ApiError.HEADER_TOO_LARGE,
                        f"request head over {self.max_bytes} bytes",
                    )
                )
            if match is not None:
                self._check(bytes(data[:size]))
        return super().maybe_extract_lines()

    def _check(self, head: bytes) -> None:
        """RFC 9112: CRLF line ends only (2.2), no obs-fold (5.2), one body framing (6.3)."""
        if head.count(b"\n") != head.count(b"\r\n"):
            problem = "bare LF line end"
        elif b"\n " in head or b"\n\t" in head:
            problem = "obs-fold continuation line"
        else:
            names = {line.partition(b":")[0].lower() for line in head.split(b"\r\n")[1:]}
            if not {b"content-length", b"transfer-encoding"} <= names:
                return
            problem = "both Content-Length and Transfer-Encoding (RFC 9112 section 6.3)"
        self._refuse(replace(MALFORMED, detail=problem))

    def _refuse(self, refusal: Refusal) -> None:
        self.refusal = refusal
        raise h11.LocalProtocolError(refusal.detail)  # h11 re-raises it as a RemoteProtocolError


Registry = dict[str, dict["GuardedH11Protocol", None]]  # per source address, an ordered set


class GuardedH11Protocol(H11Protocol):
    """Set by :func:`protocol_class`: limits, and the connections that may be dropped per
    source address: those that have sent nothing (in arrival order) and the others (the
    one without progress for longest first)."""

    request_timeout: float
    write_timeout: float
    max_connections: int
    max_header_bytes: int
    max_pipelined: int
    ipv6_prefix: int  # an IPv6 source is its network of this prefix (security.client_source)
    silent: Registry  # connections that have sent nothing yet, in arrival order
    waiting: Registry  # the other droppable ones, in order of their last progress
    per_address: Counter[str]  # open connections of each source address

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[arg-type]  # uvicorn: a Transport
        self.transport.set_write_buffer_limits(high=0)  # pause_writing: the socket took not all
        self.head = StrictHeadBuffer(self.max_header_bytes)
        self.conn._receive_buffer = self.head
        self.deadline: asyncio.TimerHandle | None = None
        self.write_deadline: asyncio.TimerHandle | None = None
        self.unsent = 0  # bytes not yet taken by the socket when the write deadline was armed
        self.owes: type[h11.IDLE] | type[h11.SEND_BODY] | None = None
        self.pipelined = 0  # requests in a row that were received before the previous answer ended
        peer = transport.get_extra_info("peername")
        self.address: str = client_source(peer[0], self.ipv6_prefix) if isinstance(peer, tuple) else ""
        self.per_address[self.address] += 1
        self.heard = False  # any byte received yet
        self._track()
        self._arm()
        if self._crowded():
            self._make_room(self.silent)

    def data_received(self, data: bytes) -> None:
        if not self.heard:
            self.heard = True
            self._unplace()
            if self._crowded() and not self._make_room(self.silent, self.waiting):
                return  # refused: every other connection is being answered
        if self.conn.their_state is h11.IDLE and self.deadline is None:
            self._arm()  # first bytes after an idle keep-alive
        super().data_received(data)
        self._track(progress=True)

    def on_response_complete(self) -> None:
        if self.conn.their_state is h11.DONE and len(self.head) and not self.transport.is_closing():
            self.pipelined += 1  # the next request is already here
            if self.pipelined > self.max_pipelined:
                self.drop(
                    Refusal(
                        429,
                        "Too Many Requests",
                        ApiError.TOO_MANY_REQUESTS,
                        f"more than {self.max_pipelined} requests pipelined; wait for the answers",
                    )
                )
        else:
            self.pipelined = 0
        super().on_response_complete()  # may read a pipelined request
        self._track(progress=self.pipelined > 0)

    def pause_writing(self) -> None:
        super().pause_writing()
        self.unsent = self.transport.get_write_buffer_size()
        self.write_deadline = self.loop.call_later(self.write_timeout, self._undrained)
        self._place(progress=True)  # its wait for the client starts now

    def resume_writing(self) -> None:
        super().resume_writing()
        self._cancel_write_deadline()
        self._place(progress=True)

    def connection_lost(self, exc: Exception | None) -> None:
        self._unplace()
        self.per_address[self.address] -= 1
        if not self.per_address[self.address]:
            del self.per_address[self.address]
        self._disarm()
        self._cancel_write_deadline()
        super().connection_lost(exc)

    def send_400_response(self, msg: str) -> None:
        self.drop(self.head.refusal or MALFORMED)

    def drop(self, refusal: Refusal) -> None:
        """Answer (unless a response is under way) and close the connection; abort it when
        its client does not read (an answer would never reach it, and a close would wait
        for the unsent bytes)."""
        cycle = self.cycle
        if self.flow.write_paused or (
            cycle is not None and not cycle.response_complete and self.conn.their_state is h11.DONE
        ):  # not reading, or its request whole and being answered: no answer of ours can follow
            self.transport.abort()
        elif not self.transport.is_closing():
            # the last request's cycle: its response may be long complete
            if cycle is None or not cycle.response_started or cycle.response_complete:
                self.transport.write(raw_response(refusal))
            self.transport.close()
        self._unplace()

    def _crowded(self) -> bool:
        return len(self.connections) > self.max_connections

    def _make_room(self, *registries: Registry) -> bool:
        """Drop the first connection of ``registries`` (the first of them holding one) from
        the source address holding the most connections. On arrival (the silent only, this
        one among them) this one is dropped only when its address is the heaviest and
        others are silent, and nothing is when no other is: it is admitted one over the
        cap until it speaks. On its first bytes (not registered), this one is refused
        only when no other may be dropped. Whether this one is kept."""
        heaviest = max(
            (address for registry in registries for address in registry),
            key=self.per_address.__getitem__,
            default=None,
        )
        ours = [registry[heaviest] for registry in registries if heaviest in registry]
        victim = next(iter(ours[0])) if ours else self
        if victim is self and registries == (self.silent,) and sum(map(len, self.silent.values())) == 1:
            return True
        why = "every other one is being answered" if heaviest is None else f"{heaviest} holds the most"
        victim.drop(
            Refusal(
                503,
                "Service Unavailable",
                ApiError.TOO_MANY_CONNECTIONS,
                f"more than {self.max_connections} connections; {why}",
            )
        )
        return victim is not self

    def _track(self, progress: bool = False) -> None:
        """Keep this connection's deadline and place among the waiting in step with what the
        client owes: a head (idle), the rest of a body, or nothing (its request is being
        answered). A new wait, or bytes received (``progress``), put it last: the connection
        without progress for longest is dropped first."""
        state = self.conn.their_state
        owes = state if state in OWING and not self.transport.is_closing() else None
        if owes is not self.owes:
            self.owes = owes
            progress = True
            if owes is h11.SEND_BODY:
                self._arm()  # head complete: the body gets its own deadline
            elif owes is h11.IDLE and len(self.head):  # a pipelined head already begun
                self._unset_keepalive_if_required()
                self._arm()
            elif owes is None:
                self._disarm()
            # owes IDLE, nothing received: uvicorn's keep-alive timer runs; the first bytes arm ours
        self._place(progress)

    def _place(self, progress: bool) -> None:
        """Droppable while the client owes bytes, does not read its answers, or is answered
        a request it sent before reading the previous answer: among the silent until its
        first byte, then among the waiting, moved last on ``progress``."""
        queued = self.pipelined and not self.transport.is_closing()
        if self.owes is None and not queued and not self.flow.write_paused:  # (a close waits
            self._unplace()  # for the unsent bytes: paused, it stays droppable)
            return
        registry = self.waiting if self.heard else self.silent
        ours = registry.setdefault(self.address, {})
        if progress or self not in ours:
            ours.pop(self, None)
            ours[self] = None

    def _unplace(self) -> None:
        for registry in (self.silent, self.waiting):
            ours = registry.get(self.address, {})
            ours.pop(self, None)
            if not ours:
                registry.pop(self.address, None)

    def _arm(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
        self.deadline = self.loop.call_later(self.request_timeout, self._late)

    def _disarm(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
        self.deadline = None

    def _cancel_write_deadline(self) -> None:
        if self.write_deadline is not None:
            self.write_deadline.cancel()
        self.write_deadline = None

    def _undrained(self) -> None:
        """The write deadline: a client that took some bytes gets as long again for the
        rest; one that took none is cut off."""
        unsent = self.transport.get_write_buffer_size()
        self.write_deadline = None
        if unsent >= self.unsent:
            self.transport.abort()
        elif unsent:
            self.unsent = unsent
            self.write_deadline = self.loop.call_later(self.write_timeout, self._undrained)

    def _late(self) -> None:
        self.deadline = None
        part = "head" if self.conn.their_state is h11.IDLE else "body"
        self.drop(
            Refusal(
                408,
                "Request Timeout",
                ApiError.REQUEST_TIMEOUT,
                f"request {part} not received within {self.request_timeout:g} s",
            )
        )


def protocol_class(config: Config) -> type[GuardedH11Protocol]:
    """The protocol class of one server, with its limits and its own connection registry."""
    return type(
        "MosaicH11Protocol",
        (GuardedH11Protocol,),
        {
            "request_timeout": config.service_request_timeout_seconds,
            "write_timeout": config.service_write_timeout_seconds,
            "max_connections": config.service_max_connections,
            "max_header_bytes": config.service_max_header_bytes,
            "max_pipelined": config.service_max_pipelined_requests,
            "ipv6_prefix": config.service_ipv6_client_prefix,
            "silent": {},
            "waiting": {},
            "per_address": Counter(),
        },
    )
