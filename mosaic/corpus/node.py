"""Start a dispynode that takes a secret, in a folder of its own, without showing the secret to anyone.

    python -m mosaic.corpus.node [--secret-file PATH] --node-dir DIR -- DISPYNODE_SCRIPT [OPTIONS...]
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

dispynode unpickles ``DIR/dispy/node/config.pkl`` when it starts and runs the
files its clients leave under DIR: whoever can write there runs code as the
node's user. DIR becomes dispynode's ``--dest_path_prefix`` (after OPTIONS,
so that it is the one dispynode keeps); it is created with mode 700 when
missing, and otherwise refused (status 2) unless it is an empty folder, not a
link, of the caller's uid, that no one else may enter, on a path that no one
else may change (every folder above it is the caller's or root's, and writable
by others only with the sticky bit, as /tmp). Empty, because whether a folder
was ever open to others cannot be seen afterwards: one that was (until
2026-11-29 the refusal advised ``chmod 700``) may still hold what someone
planted, so a folder that holds anything is never used, whatever its mode now.
The cluster scripts give each node start a fresh ``mktemp -d`` folder: a fixed
name in a shared /tmp could be created first by anyone.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import runpy
import secrets
import stat
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


FRESH_FOLDER = "leave MOSAIC_NODE_DIR unset for a fresh private folder, or name one that does not exist yet"
SHOWN_ENTRIES = 3  # a refused folder's message names this many of what it holds


def private_folder(
    path: str,
    what: str = "node folder",
    why: str = "dispynode runs what it holds",
    remedy: str = FRESH_FOLDER,
    empty: bool = True,
) -> str:
    """The real path of the ``what`` ``path``, created (mode 700) if missing; EngineError
    naming the problem when it is not a private folder of the caller's (nor, with ``empty``,
    an empty one: whether it was ever open to others cannot be seen afterwards), or when
    someone else could plant files in it (module docstring)."""
    path = os.path.abspath(os.path.expanduser(path))
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    status = os.lstat(path)
    if stat.S_ISLNK(status.st_mode) or not stat.S_ISDIR(status.st_mode):
        raise EngineError(f"{what} {path} is not a folder (a link is refused)")
    if status.st_uid != os.geteuid():
        raise EngineError(
            f"{what} {path} is owned by uid {status.st_uid}, not by you (uid {os.geteuid()}): {why}; {remedy}"
        )
    mode = stat.S_IMODE(status.st_mode)
    if mode & 0o077:
        raise EngineError(
            f"{what} {path} may be entered by group or others (mode {mode:03o}): anyone may have "
            f"left files there, and {why}; {remedy}"
        )
    if empty and (held := sorted(os.listdir(path))):
        shown = ", ".join(held[:SHOWN_ENTRIES]) + (", ..." if len(held) > SHOWN_ENTRIES else "")
        raise EngineError(
            f"{what} {path} is not empty ({shown}): {why}, and whether "
            f"the folder was ever open to others cannot be seen afterwards; {remedy}"
        )
    real = os.path.realpath(path)
    above = os.path.dirname(real)
    while True:
        status = os.stat(above)
        shared = status.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not status.st_mode & stat.S_ISVTX
        if status.st_uid not in (0, os.geteuid()) or shared:
            raise EngineError(
                f"{what} {path}: {above} (uid {status.st_uid}, mode {stat.S_IMODE(status.st_mode):o}) "
                "lets others replace what it holds: choose a folder under one of your own"
            )
        if above == os.path.dirname(above):
            return real
        above = os.path.dirname(above)


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
        "--node-dir",
        workdir,
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
    ]


def main(argv: list[str]) -> int:
    """Run dispynode (the words after ``--``) with the secret of the file; 2 when it is refused."""
    parser = argparse.ArgumentParser(prog="python -m mosaic.corpus.node")
    parser.add_argument("--secret-file", default=os.environ.get(SECRET_FILE_ENV) or DEFAULT.node_secret_file)
    parser.add_argument("--check", action="store_true", help="check the secret file and exit")
    parser.add_argument("--node-dir", help="the node's private folder (dispynode's --dest_path_prefix)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- DISPYNODE_SCRIPT [OPTIONS...]")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not (args.check or (command and args.node_dir)):
        parser.error("give --node-dir DIR, then the dispynode script to run after --")
    try:
        secret = read_secret(args.secret_file)
        if args.check:
            return 0
        folder = private_folder(args.node_dir)
    except (EngineError, OSError) as error:
        sys.stderr.write(f"refusing to start dispynode: {error}\n")
        return 2
    script, options = command[0], command[1:]
    # Last, so that argparse keeps these over any in `options`; one word each: a secret may start with "-"
    sys.argv = [script, *options, f"--dest_path_prefix={folder}", f"--secret={secret}"]
    runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
