"""`mosaic serve` and `mosaic lookup`: the click commands of the service.

Heavy modules (uvicorn, FastAPI, the worker pool, httpx) are imported when a
command runs, so that `mosaic --help` stays fast.
"""

from __future__ import annotations

import dataclasses
import json
import os
import resource
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import click

from mosaic.errors import ApiError
from mosaic.options import load_config
from mosaic.secretfile import read_secret_file
from mosaic.service.security import is_loopback

if TYPE_CHECKING:
    import httpx

    from mosaic.config import Config
    from mosaic.corpus.listing import ApplicationList, Filters
    from mosaic.corpus.store import Store

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_PORT = 8420


class ServerError(click.ClickException):
    """The server could not be reached or answered an error: status 3, so a script tells
    it from an unknown application (status 1)."""

    exit_code = 3


def token_from(path: str | None, option: str) -> str | None:
    """The token of ``path`` (None without one); a bad token file stops the command with a usage error."""
    if path is None:
        return None
    try:
        return read_secret_file(path)
    except (OSError, ValueError) as error:
        raise click.BadParameter(str(error), param_hint=option) from None


def token_file_option(help: str) -> Callable[[F], F]:
    """--token-file, told as the server takes it or as a client sends it."""
    return click.option("--token-file", type=click.Path(exists=True, dir_okay=False), help=help)


client_token_option = token_file_option("With --server: file holding the bearer token the server asks for.")
server_option = click.option("--server", metavar="URL", help="Ask a running `mosaic serve` instead.")
store_option = click.option(
    "--store",
    "store_path",
    type=click.Path(exists=True, dir_okay=False),
    help="Read this SQLite store directly.",
)
reader_config_option = click.option(
    "--config",
    "config_file",
    type=click.Path(exists=True, dir_okay=False),
    help="TOML file of mosaic.config.Config, read with a store (OUT or --store): its profile window, "
    "periodic share and name bound, as `mosaic serve --config` would answer (a --server answers "
    "with its own).",
)
uid_option = click.option(
    "--uid",
    required=True,
    type=click.IntRange(-(1 << 63), (1 << 63) - 1),
    help="User id (int64, as logs claim it).",
)
app_option = click.option("--app", "application", required=True, help="Executable path (first token).")


@click.command()
@click.option(
    "--store",
    "store_path",
    required=True,
    type=click.Path(dir_okay=False),
    help="SQLite results store (from `mosaic run`; a missing one is refused, but with --create).",
)
@click.option("--create", is_flag=True, help="Start with an empty store when --store does not exist.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option("--port", default=DEFAULT_PORT, show_default=True, type=click.IntRange(0, 65535))
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=None,
    help="Categorization processes [default: number of CPUs].",
)
@token_file_option("File holding the bearer token (required to bind a non-loopback address).")
@click.option(
    "--write-token-file",
    type=click.Path(exists=True, dir_okay=False),
    help="File holding the token that may record in the store (?store=true) "
    "[default: the --token-file token; neither: the store is read-only].",
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(exists=True, dir_okay=False),
    help="TOML file overriding thresholds of mosaic.config.Config.",
)
def serve(
    store_path: str,
    create: bool,
    host: str,
    port: int,
    workers: int | None,
    token_file: str | None,
    write_token_file: str | None,
    config_file: str | None,
) -> None:
    """Serve categories to schedulers over HTTP (FastAPI + uvicorn).

    \b
    POST     /v1/categorize[?store=true]   body: one Darshan log (gzip allowed)
    GET      /v1/applications?uid=U&app=EXE   one application: categories, profile
    POST     /v1/applications/query        the same, body {"uid": U, "app": EXE}
    GET      /v1/applications[?uid=U&match=TEXT&label=L&periodic=true|false
             &sort=KEY&reverse=true&offset=N&limit=N]   the applications, paged
    GET      /v1/jobs/JOB_ID               a job's stored runs
    POST     /v1/running/start|end?job_id=J&uid=U...   a job started, ended (write token)
    GET      /v1/running[?uid=U]           the jobs running now (the write token sees all)
    GET      /v1/forecast?uid=U&app=EXE    if it starts now: the load ahead, its risk, conflicts
    GET|HEAD /healthz                      liveness (no token); 503 when the store is not usable
    GET      /metrics                      Prometheus counters and latency
    GET      /docs, /openapi.json          the endpoints (a page, nothing fetched), their schema
    """
    token = token_from(token_file, "--token-file")
    write_token = token_from(write_token_file, "--write-token-file") or token
    if token is None and not is_loopback(host):
        raise click.UsageError(f"binding {host} (not loopback) requires --token-file")
    if not create and not os.path.exists(store_path):  # a typo would serve an empty store
        raise click.UsageError(
            f"no store at {store_path}: give the store `mosaic run` wrote, or --create for an empty one"
        )
    config = load_config(config_file)
    import uvicorn

    from mosaic.service.app import ServiceSettings, create_app
    from mosaic.service.protocol import protocol_class
    from mosaic.service.security import Tokens
    from mosaic.service.shutdown import log_config

    settings = ServiceSettings(
        store=store_path,
        config=config,
        workers=workers or os.cpu_count() or 1,
        tokens=Tokens(token, write_token),
    )
    raise_open_files_limit()
    uvicorn.run(
        create_app(settings),
        host=host,
        port=port,
        access_log=False,
        log_level="info",
        log_config=log_config(config.service_shutdown_seconds),
        http=protocol_class(config),
        h11_max_incomplete_event_size=config.service_max_header_bytes,
        timeout_graceful_shutdown=config.service_shutdown_seconds,
    )


def raise_open_files_limit() -> None:
    """Use the hard limit of open files: each connection holds one until dropped."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


@click.command()
@uid_option
@app_option
@store_option
@server_option
@client_token_option
@reader_config_option
@click.option("--json", "as_json", is_flag=True, help="Print the API's JSON object, not a table.")
def lookup(
    uid: int,
    application: str,
    store_path: str | None,
    server: str | None,
    token_file: str | None,
    config_file: str | None,
    as_json: bool,
) -> None:
    """Print what the store knows of one (user, application): its heaviest run's
    categories and the profile of its stored runs, as a table (or JSON).

    Exits with status 1 when the application is unknown, after listing the
    uid's applications whose path holds the name asked for (`--app gmx_mpi`
    finds /opt/gromacs/bin/gmx_mpi).
    """
    source = Source.of(None, store_path, server, token_file, config_file, takes_out=False)
    answer: dict[str, Any] | None
    if source.store is not None:
        from mosaic.trace import bounded_name

        config = source.config
        with source.opened() as store:  # a long name as `mosaic run` stored it
            stored = store.application(
                uid, bounded_name(application, config.max_name_chars), config.profile_min_periodic_share
            )
        found = stored is not None
        none = {"status": "error", "error": ApiError.UNKNOWN_APPLICATION}
        answer = dict(stored) if stored is not None else none
    else:
        # POST: the body carries an application of any length
        response = source.ask("POST", "/v1/applications/query", json={"uid": uid, "app": application})
        answer = _json_object(response)
        found = response.status_code == 200 and answer is not None
        unknown = response.status_code == 404 and (answer or {}).get("error") == ApiError.UNKNOWN_APPLICATION
        if not (found or unknown):  # an error, or not a MOSAIC service at that URL
            raise ServerError(f"{server} answered {response.status_code}: {response.text}")
    if as_json:
        sys.stdout.write(json.dumps(answer) + "\n")
    elif found:
        from mosaic.service.lookup_view import render

        sys.stdout.write(render(answer))  # type: ignore[arg-type]  # an ApplicationAnswer
    else:
        sys.stdout.write(f"no application {application!r} for uid {uid} in the store\n")
        sys.stdout.write(_suggestions(source, uid, application))
    sys.exit(0 if found else 1)


@click.command()
@uid_option
@app_option
@click.option(
    "--time-limit",
    type=click.FloatRange(min=0, min_open=True),
    help="The job's time limit in seconds: caps its expected run time.",
)
@click.option("--at", type=float, help="Forecast from this start (epoch seconds) [default: now].")
@store_option
@server_option
@client_token_option
@reader_config_option
@click.option("--json", "as_json", is_flag=True, help="Print the API's JSON object, not a summary.")
def forecast(
    uid: int,
    application: str,
    time_limit: float | None,
    at: float | None,
    store_path: str | None,
    server: str | None,
    token_file: str | None,
    config_file: str | None,
    as_json: bool,
) -> None:
    """If (user, application) starts now: the load ahead on the shared file systems,
    its expected I/O phases and slowdown, the running jobs it would meet and slow,
    and its risk class (docs/method.md 3.13).

    A --store is read as the operator reads it (the running jobs named); a
    --server answers under its token's visibility. Exits with status 1 when the
    answer has no risk class (an unknown application, too few runs, no signature).
    """
    import time

    source = Source.of(None, store_path, server, token_file, config_file, takes_out=False)
    now = time.time() if at is None else at
    answer: dict[str, Any] | None
    if source.store is not None:
        from mosaic.forecast import Viewer
        from mosaic.forecast_store import store_forecast

        with source.opened() as store:
            answer = store_forecast(
                store,
                uid,
                application,
                now,
                time_limit=time_limit,
                viewer=Viewer(operator=True, uid=uid),
                config=source.config,
            )
    else:
        params: dict[str, Any] = {"uid": uid, "app": application, "at": now}
        if time_limit is not None:
            params["time_limit"] = time_limit
        response = source.ask("GET", "/v1/forecast", params=params)
        answer = _json_object(response)
        if response.status_code != 200 or answer is None or "risk" not in answer:
            raise ServerError(f"{server} answered {response.status_code}: {response.text}")
    if as_json:
        sys.stdout.write(json.dumps(answer) + "\n")
    else:
        from mosaic.service.forecast_view import render_forecast

        sys.stdout.write(render_forecast(answer))
    sys.exit(0 if answer["risk"]["class"] is not None else 1)


def _suggestions(source: Source, uid: int, application: str) -> str:
    """The uid's applications whose path holds the last part of ``application``, as lines."""
    from mosaic.corpus.listing import Filters

    name = application.rstrip("/").rsplit("/", 1)[-1]
    if not name:
        return ""
    near = source.applications(Filters(uid=uid, match=name, sort="app"))
    paths = [item["application"] for item in near["applications"]]
    if not paths:
        return ""
    more = near["total"] - len(paths)
    return (
        "did you mean:\n"
        + "".join(f"  --app {path}\n" for path in paths)
        + (f"  ({more:,} more)\n" if more else "")
    )


@click.command()
@click.argument("out", required=False, type=click.Path(exists=True, file_okay=False))
@store_option
@server_option
@client_token_option
@click.option("--uid", type=click.IntRange(-(1 << 63), (1 << 63) - 1), help="Only this user's applications.")
@click.option("--match", metavar="TEXT", help="Only applications whose path holds TEXT.")
@click.option("--label", metavar="LABEL", help="Only applications with a run carrying LABEL.")
@click.option(
    "--periodic/--not-periodic",
    default=None,
    help="Only applications with (without) a period class, as their lookup gives it.",
)
@click.option(
    "--sensitive/--not-sensitive",
    default=None,
    help="Only applications labelled sensitive to the file system's load (not: all others).",
)
@click.option(
    "--aggressor/--not-aggressor",
    default=None,
    help="Only applications with an aggressor trait: n1, metadata, bandwidth, small_requests.",
)
@click.option(
    "--sort",
    default="runs",
    show_default=True,
    metavar="KEY",
    help="runs, bytes (the heaviest run's), period_class, last_seen, app, uid, or a label (its "
    "share of runs); largest first but for app and uid.",
)
@click.option("--reverse", is_flag=True, help="Flip the order.")
@click.option("--offset", default=0, show_default=True, type=click.IntRange(min=0), help="Skip this many.")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(min=1), help="Show this many.")
@click.option("--json", "as_json", is_flag=True, help="Print the API's JSON object, not a table.")
@click.option(
    "--pairs",
    is_flag=True,
    help="Print only UID<TAB>APPLICATION lines, what `mosaic lookup --uid --app` takes (for scripts).",
)
@reader_config_option
def apps(
    out: str | None,
    store_path: str | None,
    server: str | None,
    token_file: str | None,
    uid: int | None,
    match: str | None,
    label: str | None,
    periodic: bool | None,
    sensitive: bool | None,
    aggressor: bool | None,
    sort: str,
    reverse: bool,
    offset: int,
    limit: int,
    as_json: bool,
    pairs: bool,
    config_file: str | None,
) -> None:
    """List the stored applications, the pairs `mosaic lookup` takes.

    From OUT (a `mosaic run` folder), a --store or a --server: each (uid,
    application) with its runs, its heaviest run's bytes, its period class
    and, for --label or a label as --sort, that label's share of its runs.
    Exits with status 1 when no application matches.
    """
    from mosaic.analysis.labels import ALL_LABELS
    from mosaic.corpus.listing import Filters

    source = Source.of(out, store_path, server, token_file, config_file)
    try:
        filters = Filters(uid, match, label, periodic, sort, reverse, offset, limit, sensitive, aggressor)
    except ValueError as error:
        raise click.UsageError(str(error)) from None
    listed = source.applications(filters)
    if as_json:
        sys.stdout.write(json.dumps(listed) + "\n")
    elif pairs:
        sys.stdout.write(
            "".join(f"{item['uid']}\t{item['application']}\n" for item in listed["applications"])
        )
    else:
        from mosaic.service.lookup_view import render_list

        sys.stdout.write(render_list(listed, label or (sort if sort in ALL_LABELS else None)))
    sys.exit(0 if listed["total"] else 1)


@dataclass(frozen=True)
class Source:
    """Where the commands read: a store file (read with ``config``: its profile window,
    periodic share and name bound), or a server (with its token; it answers with its own)."""

    store: str | None
    server: str | None
    token: str | None
    config: Config

    @classmethod
    def of(
        cls,
        out: str | None,
        store_path: str | None,
        server: str | None,
        token_file: str | None,
        config_file: str | None,
        takes_out: bool = True,
    ) -> Source:
        """The one source given (OUT is a `mosaic run` folder holding store.sqlite)."""
        if sum(value is not None for value in (out, store_path, server)) != 1:
            raise click.UsageError(f"give exactly one of {'OUT, ' if takes_out else ''}--store and --server")
        if out is not None:
            store_path = os.path.join(out, "store.sqlite")
            if not os.path.isfile(store_path):
                raise click.UsageError(f"{store_path} not found: is {out} the --out of a `mosaic run`?")
        token = token_from(token_file, "--token-file") if server else None
        return cls(store_path, server.rstrip("/") if server else None, token, load_config(config_file))

    def opened(self) -> Store:
        """The store file, its profiles over the configuration's window."""
        from mosaic.corpus.store import Store

        assert self.store is not None
        return Store(self.store, window=self.config.profile_window_runs)

    def ask(self, method: str, path: str, **request: Any) -> httpx.Response:
        """The server's answer; an unreachable server stops the command (status 3)."""
        import httpx

        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        try:
            return httpx.request(method, f"{self.server}{path}", headers=headers, **request)
        except httpx.HTTPError as error:
            raise ServerError(f"cannot reach {self.server}: {error}") from error

    def applications(self, filters: Filters) -> ApplicationList:
        """One page of the applications, from the store or the server."""
        if self.store is not None:
            with self.opened() as store:
                return store.applications(filters, self.config.profile_min_periodic_share)
        params = {k: v for k, v in dataclasses.asdict(filters).items() if v is not None}
        response = self.ask("GET", "/v1/applications", params=params)
        answer = _json_object(response)
        if response.status_code != 200 or answer is None or "applications" not in answer:
            raise ServerError(f"{self.server} answered {response.status_code}: {response.text}")
        return answer  # type: ignore[return-value]  # the API's ApplicationList


def _json_object(response: httpx.Response) -> dict[str, Any] | None:
    try:
        answer = response.json()
    except ValueError:
        return None
    return answer if isinstance(answer, dict) else None
