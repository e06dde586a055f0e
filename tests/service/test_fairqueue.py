"""The clients' fair shares: who a client is (its source), and the pool's fair queue when
requests are cancelled together (SIGTERM past service_shutdown_seconds cancels every
request at once)."""

from __future__ import annotations

import asyncio

import pytest

from mosaic.config import Config
from mosaic.service.fairqueue import FairQueue
from mosaic.service.security import client_source


@pytest.mark.parametrize(
    ("host", "prefix", "source"),
    [
        ("127.0.0.2", 64, "127.0.0.2"),  # IPv4: the address
        ("2001:db8:1:2:aaaa::1", 64, "2001:db8:1:2::/64"),  # IPv6: its /64, whatever the host part
        ("2001:db8:1:2:ffff:ffff:ffff:ffff", 64, "2001:db8:1:2::/64"),
        ("2001:db8:1:3::1", 64, "2001:db8:1:3::/64"),  # the next /64: another client
        ("2001:db8:1:3::1", 48, "2001:db8:1::/48"),
        ("2001:db8:1:3::1", 128, "2001:db8:1:3::1/128"),
        ("fe80::1%eth0", 64, "fe80::/64"),  # a zone is no part of the source
        ("::ffff:10.1.2.3", 64, "10.1.2.3"),  # IPv4-mapped: the IPv4 client it is
        ("::1", 64, "::/64"),
        ("testclient", 64, "testclient"),  # not an address (a test transport): as it is
    ],
)
def test_a_client_is_its_ipv4_address_or_its_ipv6_network(host, prefix, source):
    """Until 2026-11-29 every IPv6 address was a client of its own: one host with a /64
    could take every place of the connection cap and the queue."""
    assert client_source(host, prefix) == source


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
