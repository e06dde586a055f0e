"""The pool's fair queue when requests are cancelled together (SIGTERM past
service_shutdown_seconds cancels every request at once)."""

from __future__ import annotations

import asyncio

from mosaic.config import Config
from mosaic.service.fairqueue import FairQueue


async def cancelled_together(running_first: bool) -> tuple[FairQueue, list[BaseException | None]]:
    """One worker: a request holding it and one waiting, both cancelled in one step."""
    queue = FairQueue(1, Config())
    release = asyncio.Event()

    async def request(address: str) -> None:
        ticket = queue.admit((address, False))
        try:
            async with queue.worker(ticket):
                await release.wait()
        finally:
            queue.leave(ticket)

    holding = asyncio.create_task(request("127.0.0.1"))
    await asyncio.sleep(0)
    waiting = asyncio.create_task(request("127.0.0.2"))
    await asyncio.sleep(0)
    assert queue.free == 0 and len(queue.waiting) == 1
    for task in (holding, waiting) if running_first else (waiting, holding):
        task.cancel()
    ended = await asyncio.gather(holding, waiting, return_exceptions=True)
    return queue, list(ended)


def test_a_waiting_request_cancelled_with_the_one_holding_the_worker_is_not_handed_it():
    """The holder's exit hands the worker on; the waiting request's turn is already cancelled
    (before 2026-11-29: InvalidStateError, a traceback per request at every SIGTERM)."""
    for running_first in (True, False):
        queue, ended = asyncio.run(cancelled_together(running_first))
        assert [type(e) for e in ended] == [asyncio.CancelledError, asyncio.CancelledError]
        assert (queue.free, queue.waiting, +queue.running, +queue.admitted) == (1, [], {}, {})
