"""The scheduler-facing service: ``mosaic serve`` and ``mosaic lookup`` (SPEC 1).

Modules, in the order a request meets them:

* :mod:`~mosaic.service.commands`: the click commands (options, token files);
* :mod:`~mosaic.service.protocol`: uvicorn's h11 protocol, hardened (head size and
  framing, deadlines, connection cap);
* :mod:`~mosaic.service.security`: loopback rule, token files, bearer check, who a client
  is (its IPv4 address or IPv6 network) for the fair shares;
* :mod:`~mosaic.service.guard`: the ASGI middleware checking the token, counting requests;
* :mod:`~mosaic.service.app`: the FastAPI application factory (lifespan, middleware);
* :mod:`~mosaic.service.routes`: the endpoints, reaching the store and pool through
  ``app.state``;
* :mod:`~mosaic.service.pool`: categorization in pebble worker processes;
* :mod:`~mosaic.service.storewatch`: whether the store file is still the one opened;
* :mod:`~mosaic.service.errors`: the one JSON error shape and its OpenAPI entries
  (the codes: :class:`mosaic.errors.ApiError`);
* :mod:`~mosaic.service.metrics`: Prometheus counters of one app;
* :mod:`~mosaic.service.shutdown`: SIGTERM's one log line for the requests it cancels;
* :mod:`~mosaic.service.registry`: the jobs running now (``/v1/running``), which the Slurm
  prolog and epilog keep (:mod:`~mosaic.service.running_spool`: the epilog's side).

Nothing here is imported by ``mosaic --help``: the CLI loads
``mosaic.service.commands`` only when a service command runs.
"""
