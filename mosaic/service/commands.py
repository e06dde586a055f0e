"""`mosaic serve` and `mosaic lookup`: the click commands of the service.

Heavy modules (uvicorn, FastAPI, the worker pool, httpx) are imported when a
command runs, so that `mosaic --help` stays fast.
"""

from __future__ import annotations

import json
import os
import resource
import sys
from typing import TYPE_CHECKING, Any

import click

from mosaic.errors import ApiError
from mosaic.options import load_config
from mosaic.service.security import is_loopback, read_token

if TYPE_CHECKING:
    import httpx

DEFAULT_PORT = 8420


def token_from(path: str | None, option: str) -> str | None:
    """The token of ``path``; a bad token file stops the command with a usage error."""
    try:
        return read_token(path)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint=option) from None


token_file_option = click.option(
    "--token-file",
    type=click.Path(exists=True, dir_okay=False),
    help="File holding the bearer token (required to bind a non-loopback address).",
)


@click.command()
@click.option(
    "--store",
    "store_path",
    required=True,
    type=click.Path(dir_okay=False),
    help="SQLite results store (from `mosaic run`, or a new file).",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option("--port", default=DEFAULT_PORT, show_default=True, type=click.IntRange(0, 65535))
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=None,
    help="Categorization processes [default: number of CPUs].",
)
@token_file_option
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
    host: str,
    port: int,
    workers: int | None,
    token_file: str | None,
    write_token_file: str | None,
    config_file: str | None,
) -> None:
    """Serve categories to schedulers over HTTP (FastAPI + uvicorn).

    \b
    POST /v1/categorize[?store=true]    body: one Darshan log (gzip allowed)
    GET  /v1/applications?uid=U&app=EXE
    GET  /v1/jobs/JOB_ID
    GET  /healthz, /metrics, /docs (OpenAPI)
    """
    token = token_from(token_file, "--token-file")
    write_token = token_from(write_token_file, "--write-token-file") or token
    if token is None and not is_loopback(host):
        raise click.UsageError(f"binding {host} (not loopback) requires --token-file")
    config = load_config(config_file)
    import uvicorn

    from mosaic.service.app import ServiceSettings, create_app
    from mosaic.service.protocol import protocol_class
    from mosaic.service.security import Tokens

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
        http=protocol_class(config),
        h11_max_incomplete_event_size=config.service_max_header_bytes,
    )


def raise_open_files_limit() -> None:
    """Use the hard limit of open files: each connection holds one until dropped."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


@click.command()
@click.option(
    "--uid",
    required=True,
    type=click.IntRange(-(1 << 63), (1 << 63) - 1),
    help="User id (int64, as logs claim it).",
)
@click.option("--app", "application", required=True, help="Executable path (first token).")
@click.option(
    "--store",
    "store_path",
    type=click.Path(exists=True, dir_okay=False),
    help="Read this SQLite store directly.",
)
@click.option("--server", metavar="URL", help="Ask a running `mosaic serve` instead.")
@token_file_option
@click.option("--json", "as_json", is_flag=True, help="Print the API's JSON object, not a table.")
def lookup(
    uid: int,
    application: str,
    store_path: str | None,
    server: str | None,
    token_file: str | None,
    as_json: bool,
) -> None:
    """Print what the store knows of one (user, application): its heaviest run's
    categories and the profile of its stored runs, as a table (or JSON).

    Exits with status 1 when the application is unknown.
    """
    if (store_path is None) == (server is None):
        raise click.UsageError("give exactly one of --store and --server")
    answer: dict[str, Any] | None
    if store_path is not None:
        from mosaic.corpus.store import Store

        with Store(store_path) as store:
            stored = store.application(uid, application)
        found = stored is not None
        none = {"status": "error", "error": ApiError.UNKNOWN_APPLICATION}
        answer = dict(stored) if stored is not None else none
    else:
        import httpx

        token = token_from(token_file, "--token-file")
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        try:
            response = httpx.post(  # the body carries an application of any length
                f"{str(server).rstrip('/')}/v1/applications/query",
                json={"uid": uid, "app": application},
                headers=headers,
            )
        except httpx.HTTPError as error:
            raise click.ClickException(f"cannot reach {server}: {error}") from error
        answer = _json_object(response)
        found = response.status_code == 200 and answer is not None
        unknown = response.status_code == 404 and (answer or {}).get("error") == ApiError.UNKNOWN_APPLICATION
        if not (found or unknown):  # an error, or not a MOSAIC service at that URL
            raise click.ClickException(f"{server} answered {response.status_code}: {response.text}")
    if as_json:
        sys.stdout.write(json.dumps(answer) + "\n")
    elif found:
        from mosaic.service.lookup_view import render

        sys.stdout.write(render(answer))  # type: ignore[arg-type]  # an ApplicationAnswer
    else:
        sys.stdout.write(f"no application {application!r} for uid {uid} in the store\n")
    sys.exit(0 if found else 1)


def _json_object(response: httpx.Response) -> dict[str, Any] | None:
    try:
        answer = response.json()
    except ValueError:
        return None
    return answer if isinstance(answer, dict) else None
