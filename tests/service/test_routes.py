"""How the endpoints use the event loop: checked on the routes FastAPI builds."""

from __future__ import annotations

import inspect

from mosaic.service.routes import router


def _dependencies(path: str, method: str) -> list:
    (route,) = [r for r in router.routes if r.path == path and method in r.methods]
    return route.dependant.dependencies


def test_categorize_hands_nothing_to_the_thread_pool():
    """FastAPI runs a plain ``def`` dependency in its thread pool: for a dictionary lookup
    that was a thread hand-off per request (server CPU 1.84 -> 1.11 ms per posted
    206 kB log under 8 clients, benchmarks/README.md). Every dependency of the
    endpoint schedulers hit hardest must be a coroutine."""
    dependencies = _dependencies("/v1/categorize", "POST")
    assert [d.call.__name__ for d in dependencies] == ["get_pool", "get_metrics", "admission"]
    # a coroutine, or an async generator (admission: its place is given back after the answer)
    calls = [d.call for d in dependencies]
    assert all(inspect.iscoroutinefunction(call) or inspect.isasyncgenfunction(call) for call in calls)
    assert all(inspect.iscoroutinefunction(d.call) for d in _dependencies("/metrics", "GET"))


def test_store_lookups_stay_in_the_thread_pool():
    """The store dependency checks the store file (a stat and a read) before SQLite
    is queried: that may block, so it stays a plain function, run off the event loop."""
    (dependency,) = _dependencies("/v1/applications", "GET")
    assert dependency.call.__name__ == "get_store"
    assert not inspect.iscoroutinefunction(dependency.call)
