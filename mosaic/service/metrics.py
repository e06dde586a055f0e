"""Prometheus counters of one app (own registry: two apps never share numbers)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram
from starlette.types import Scope

from mosaic.config import Config

# Label values are kept to known sets, so odd requests cannot grow /metrics without bound.
METRIC_METHODS = ("GET", "POST", "HEAD", "PUT", "DELETE", "PATCH", "OPTIONS")


class Metrics:
    def __init__(self, config: Config):
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "mosaic_requests",
            "HTTP requests by endpoint and status",
            ["endpoint", "method", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "mosaic_request_duration_seconds",
            "HTTP request latency",
            ["endpoint"],
            buckets=config.service_latency_buckets,
            registry=self.registry,
        )
        self.evictions = Counter(
            "mosaic_evictions", "Posted logs evicted, by reason", ["reason"], registry=self.registry
        )

    def observe(self, scope: Scope, status: int, seconds: float) -> None:
        """Count one finished request under its route (not its raw path)."""
        route = scope.get("route")
        endpoint = route.path if route is not None else "unrouted"
        method = scope["method"] if scope["method"] in METRIC_METHODS else "other"
        self.requests.labels(endpoint, method, str(status)).inc()
        self.latency.labels(endpoint).observe(seconds)
