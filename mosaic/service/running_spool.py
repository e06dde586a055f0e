"""The end of a job, and the running registry's posts the service could not take.

``mosaic epilog post`` tells the service that its job ended (``POST /v1/running/end``), for
every job, with or without a Darshan log, before posting the logs; first it retries the
spooled registry posts (the prolog's starts and the epilog's ends), oldest first, so a
job's spooled start lands before its end.

The spool is a private folder beside the epilog's, its name + ``.running``
(``/var/spool/mosaic-epilog.running``): one file per post,
``EPOCH.JOB.1.start`` or ``EPOCH.JOB.2.end`` (sorted by name: by time, and a job's start
before its end), holding the post's query string, as cluster/slurm-prolog.sh writes it. A
drainer takes an entry by renaming it (only one of two drainers can), posts it, and deletes
it, or renames it back when the service cannot take it now. A post sent twice is
harmless: the service answers ``duplicate`` or ``already_ended``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlencode

from mosaic.corpus.node import private_folder
from mosaic.service.epilog_spool import write_entry

if TYPE_CHECKING:
    from collections.abc import Callable

    import httpx

ENTRY = re.compile(r"\A(?P<epoch>\d{1,20})\.(?P<job_id>\d{1,20})\.[12]\.(?P<kind>start|end)\Z")
# What the prolog writes: its fields' own characters, percent-escapes, & and =.
QUERY = re.compile(r"\A[A-Za-z0-9_=&%/.~:,\[\]-]{1,20000}\Z")
RETRY_STATUSES = frozenset({401, 403, 408, 429, 502, 503, 504})
SUFFIX = ".running"


@dataclass(frozen=True)
class Entry:
    path: Path
    kind: str  # "start" | "end"
    job_id: str


def running_folder(spool: Path) -> Path:
    """The registry posts' private folder, beside the logs' spool ``spool``."""
    return Path(
        private_folder(
            str(spool.with_name(spool.name + SUFFIX)),
            "spool folder",
            why="its entries are posted with the write token",
            remedy="let the epilog's user alone enter it",
            empty=False,
        )
    )


def entries(folder: Path) -> list[Entry]:
    """The spooled posts, oldest first (a job's start before its end)."""
    found = []
    for name in sorted(os.listdir(folder)):
        match = ENTRY.match(name)
        if match:
            found.append(Entry(folder / name, match["kind"], match["job_id"]))
    return found


def keep(folder: Path, kind: str, job_id: str, epoch: float, query: str) -> Path:
    """Spool one post, atomically (written to a hidden name, then renamed)."""
    order = 1 if kind == "start" else 2
    final = folder / f"{int(epoch)}.{job_id}.{order}.{kind}"
    write_entry(final, (query + "\n").encode())
    return final


def end_query(job_id: str, uid: int, end: float) -> str:
    return urlencode({"job_id": job_id, "uid": uid, "end": f"{end:.3f}"})


def send(client: httpx.Client, url: str, token: str | None, kind: str, query: str) -> tuple[int, str]:
    """POST one registry post: (status, detail); status 0 when no answer came."""
    import httpx

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        answer = client.post(f"{url}/v1/running/{kind}?{query}", headers=headers)
    except httpx.HTTPError as error:
        return 0, f"no answer from {url} ({type(error).__name__})"
    return answer.status_code, answer.text[:200]


def retry(status: int) -> bool:
    return status == 0 or status in RETRY_STATUSES


def drain(
    folder: Path,
    client: httpx.Client,
    url: str,
    token: str | None,
    say: Callable[[str], None],
    limit: int | None,
) -> str | None:
    """Post the spooled registry posts, ``limit`` at most, oldest first; stop at the first
    the service cannot take now. Why the service cannot take posts (None when it can)."""
    spooled = entries(folder)
    if limit is not None and len(spooled) > limit:
        say(f"{len(spooled) - limit} spooled start and end posts left for later")
        spooled = spooled[:limit]
    for entry in spooled:
        taken = entry.path.with_name(f"{entry.path.name}.taken.{os.getpid()}")
        try:
            os.rename(entry.path, taken)  # only one drainer gets it
            query = taken.read_text().strip()
        except OSError:
            continue
        if not QUERY.match(query):
            say(f"spooled {entry.path.name} dropped: not a registry post")
            taken.unlink(missing_ok=True)
            continue
        status, detail = send(client, url, token, entry.kind, query)
        if retry(status):
            os.rename(taken, entry.path)
            say(f"spooled start and end posts wait: {detail if status == 0 else status}")
            return detail
        taken.unlink(missing_ok=True)
        say(f"spooled {entry.kind} of job {entry.job_id}: {status} {detail}")
    return None


def post_end(
    folder: Path | None,
    client: httpx.Client,
    url: str,
    token: str | None,
    job_id: str,
    uid: int,
    end: float,
    say: Callable[[str], None],
) -> str | None:
    """Tell the service the job ended; spooled when it cannot take it now. Why the service
    cannot take posts (None when it can)."""
    query = end_query(job_id, uid, end)
    status, detail = send(client, url, token, "end", query)
    if not retry(status):
        if status != 200:
            say(f"end refused: {status} {detail}")
        return None
    if folder is None:
        say(f"end lost: {detail}; no spool")
    else:
        try:
            keep(folder, "end", job_id, end, query)
            say(f"end kept in the spool: {detail if status == 0 else status}")
        except OSError as error:
            say(f"end lost: {detail}; the spool failed: {error}")
    return detail if status == 0 else f"service answered {status}"
