"""Start a dispynode that takes a secret, without showing the secret to anyone.

    python -m mosaic.corpus.node [--secret-file PATH] -- DISPYNODE_SCRIPT [DISPYNODE OPTIONS...]
    python -m mosaic.corpus.node [--secret-file PATH] --check

PATH defaults to $MOSAIC_NODE_SECRET_FILE, else ``node_secret_file`` of
mosaic/config.py; a file that is missing, empty, short or readable by others
stops it with status 2 and a message naming the file and the fix (``--check``
only checks the file: the cluster scripts refuse early).

dispy authenticates every message a client sends a node with a hash of the
node's public random sign and a shared secret; a node started without
``--secret`` runs any function any client that reaches its port sends it.
Every node mosaic starts or documents therefore takes one: a fresh random
secret per run for the local node of ``mosaic run --workers N``, and for
cluster nodes (``cluster/start-node.sh``) the secret in a private file
(``node_secret_file``) that ``mosaic run --nodes`` reads too.

dispynode only takes its secret on the command line, where every local user
can read it (``ps``, ``/proc/PID/cmdline``). This module reads it from
the secret file instead, adds ``--secret`` to ``sys.argv`` in memory and runs
DISPYNODE_SCRIPT in this process: the secret is in no command line and no
environment. The script's path stays in the command line, where dispynode's
``--clean`` looks for a stale node of the same folder to stop.
"""

from __future__ import annotations

import argparse
import os
import runpy
import secrets
import sys

from mosaic.config import DEFAULT
from mosaic.errors import EngineError
from mosaic.secretfile import read_secret_file

SECRET_BYTES = 32  # 64 hexadecimal characters, as `openssl rand -hex 32`
SECRET_FILE_ENV = "MOSAIC_NODE_SECRET_FILE"  # also read by `mosaic run --node-secret-file`


def read_secret(path: str) -> str:
    """The node secret in `path` (``~`` expanded), checked as the service's token files are:
    a file of the caller's, readable by them alone, at least 16 characters. EngineError naming
    the file and the fix."""
    path = os.path.expanduser(path)
    try:
        return read_secret_file(path)
    except FileNotFoundError:
        raise EngineError(
            f"no node secret file {path}: dispy nodes must not run without a secret; create it with: "
            f"mkdir -p {os.path.dirname(path) or '.'} && (umask 077; openssl rand -hex 32 > {path})"
        ) from None
    except (OSError, ValueError) as error:
        raise EngineError(f"node secret file: {error}") from None


def write_secret(path: str) -> str:
    """A fresh random secret, written to a new file `path` that only its owner may read."""
    secret = secrets.token_hex(SECRET_BYTES)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(descriptor, "w") as fh:
        fh.write(secret)
    return secret


def dispynode_script() -> str:
    """The dispynode script dispy installs beside python."""
    return os.path.join(os.path.dirname(sys.executable), "dispynode.py")


def dispynode_command(cpus: int, host: str, port: int, workdir: str, secret_file: str) -> list[str]:
    """The command that starts a dispynode with the secret in `secret_file` (files go under `workdir`)."""
    return [
        sys.executable,
        "-m",
        "mosaic.corpus.node",
        "--secret-file",
        secret_file,
        "--",
        dispynode_script(),
        "--cpus",
        str(cpus),
        "-i",
        host,
        "-p",
        str(port),
        "--daemon",
        "--clean",
        "--dest_path_prefix",
        workdir,
    ]


def main(argv: list[str]) -> int:
    """Run dispynode (the words after ``--``) with the secret of the file; 2 when it is refused."""
    parser = argparse.ArgumentParser(prog="python -m mosaic.corpus.node")
    parser.add_argument("--secret-file", default=os.environ.get(SECRET_FILE_ENV) or DEFAULT.node_secret_file)
    parser.add_argument("--check", action="store_true", help="check the secret file and exit")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- DISPYNODE_SCRIPT [OPTIONS...]")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not (args.check or command):
        parser.error("give the dispynode script to run after --")
    try:
        secret = read_secret(args.secret_file)
    except EngineError as error:
        sys.stderr.write(f"refusing to start dispynode: {error}\n")
        return 2
    if args.check:
        return 0
    script, options = command[0], command[1:]
    sys.argv = [script, *options, f"--secret={secret}"]  # one word: a secret may start with "-"
    runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
