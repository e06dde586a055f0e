"""Admission to the worker pool, and its workers shared fairly between clients.

Why: each posted log waits for a worker, and a connection whose request waits
is being answered, so it is never dropped for a newcomer. Before 2026-11-29 the
wait had no bound: one client holding the read token kept a ``POST
/v1/categorize`` queued on each of its connections, and on a cap of 40
connections no other request got in (0 of 37 probes); SIGTERM then waited for
the whole queue. So:

* a categorization is admitted before its body is read, at most
  ``service_max_queued`` at once and ``service_max_queued_per_client`` of a
  client (its source address and the token it holds); past either, 429 with
  ``Retry-After`` (:class:`Busy`), and the connection closes;
* a free worker goes to the waiting request of the client with the fewest
  running, the oldest first among equals, so a client's queue never delays
  another client's request by more than one categorization per worker;
* one that waits longer than ``service_queue_timeout_seconds`` for a worker
  gets 503 ``queue_timeout`` with ``Retry-After``.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from mosaic.config import Config
from mosaic.errors import ApiError

Client = tuple[str, bool]  # (source address, holds the write token)


class Busy(Exception):
    """A categorization refused for want of room or of a worker: answered ``status`` with
    ``Retry-After`` and the connection closed."""

    def __init__(self, status: int, error: ApiError, detail: str, retry_after: int) -> None:
        super().__init__(detail)
        self.status, self.error, self.detail, self.retry_after = status, error, detail, retry_after


@dataclass(eq=False)
class Ticket:
    """One admitted categorization."""

    client: Client
    running: bool = False
    turn: asyncio.Future[None] | None = field(default=None, repr=False)


class FairQueue:
    """Counts the admitted categorizations and hands the workers out."""

    def __init__(self, workers: int, config: Config) -> None:
        self.free = workers
        self.limit = config.service_max_queued
        self.per_client = config.service_max_queued_per_client
        self.wait_seconds = config.service_queue_timeout_seconds
        self.retry_after = config.service_retry_after_seconds
        self.admitted: Counter[Client] = Counter()
        self.running: Counter[Client] = Counter()
        self.waiting: list[Ticket] = []  # in arrival order

    def admit(self, client: Client) -> Ticket:
        """A ticket for one categorization of ``client``, or :class:`Busy` (429)."""
        if self.admitted.total() >= self.limit:
            self._refuse(429, ApiError.TOO_MANY_REQUESTS, f"{self.limit} categorizations queued")
        if self.admitted[client] >= self.per_client:
            self._refuse(
                429, ApiError.TOO_MANY_REQUESTS, f"{self.per_client} categorizations of yours queued"
            )
        self.admitted[client] += 1
        return Ticket(client)

    def leave(self, ticket: Ticket) -> None:
        """The ticket's request is answered (or abandoned)."""
        self.admitted[ticket.client] -= 1
        if not self.admitted[ticket.client]:
            del self.admitted[ticket.client]

    @asynccontextmanager
    async def worker(self, ticket: Ticket) -> AsyncIterator[None]:
        """Hold a worker for ``ticket`` (waiting for one at most ``wait_seconds``: then
        :class:`Busy`, 503)."""
        try:
            if self.free and not self.waiting:
                self._start(ticket)
            else:
                ticket.turn = asyncio.get_running_loop().create_future()
                self.waiting.append(ticket)
                try:
                    async with asyncio.timeout(self.wait_seconds):
                        await ticket.turn
                except TimeoutError:
                    self._refuse(
                        503, ApiError.QUEUE_TIMEOUT, f"no worker free within {self.wait_seconds:g} s"
                    )
            yield
        finally:
            if ticket.running:
                ticket.running = False
                self.running[ticket.client] -= 1
                self.free += 1
                self._hand_out()
            elif ticket in self.waiting:
                self.waiting.remove(ticket)

    def _start(self, ticket: Ticket) -> None:
        self.free -= 1
        self.running[ticket.client] += 1
        ticket.running = True

    def _hand_out(self) -> None:
        """Free workers to the waiting request of the client with the fewest running."""
        while self.free and self.waiting:
            ticket = min(self.waiting, key=lambda waiting: self.running[waiting.client])
            self.waiting.remove(ticket)
            assert ticket.turn is not None
            if ticket.turn.cancelled():  # its request was cancelled (SIGTERM cancels every one at
                continue  # once) and has yet to leave: handing it the worker raised InvalidStateError
            self._start(ticket)
            ticket.turn.set_result(None)

    def _refuse(self, status: int, error: ApiError, detail: str) -> None:
        raise Busy(status, error, f"{detail}: retry later", self.retry_after)
