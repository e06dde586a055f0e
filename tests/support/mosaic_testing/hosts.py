"""Machines for cluster tests on one machine: network namespaces on a bridge.

Each :class:`Host` is a network namespace with one interface on a private
bridge (10.77.0.0/24), its own ``/etc/netns/NS/hosts`` (which ``ip netns exec``
shows its commands as ``/etc/hosts``: the host's own name resolves to
``127.0.1.1``, as Debian sets it, the others to their bridge addresses) and its
own host name (a UTS namespace per command). The bridge lives in a namespace of
its own, so nothing of the machine's own network is touched. Every name starts
with ``mosaic-t`` and this process's id.

:meth:`Hosts.close` kills every process still inside a namespace (``ip netns
del`` does not: a dispynode would go on running, unreachable) and removes the
namespaces and their ``/etc/netns`` folders; :func:`remove_stale` does the same
for namespaces of test processes that died without closing theirs.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

PREFIX = "mosaic-t"
SUBNET = "10.77.0"
NETNS_ETC = Path("/etc/netns")
GONE_SECONDS = 15.0  # how long a namespace's processes may take to end after SIGKILL
TCP_LISTEN = "0A"  # the state column of /proc/net/tcp


def ip(*args: str) -> str:
    """`ip ARGS`; CalledProcessError with its message when refused."""
    return subprocess.run(["ip", *args], check=True, capture_output=True, text=True).stdout


def pids(namespace: str) -> list[int]:
    """The processes inside `namespace` (none once it is gone)."""
    try:
        return [int(pid) for pid in ip("netns", "pids", namespace).split()]
    except subprocess.CalledProcessError:
        return []


def listening(pid: int, port: int) -> bool:
    """Whether a TCP socket listens on `port` in the network namespace of process `pid` (its
    /proc/PID/net/tcp: psutil reads this process's namespace, and sees none of another's)."""
    try:
        rows = Path(f"/proc/{pid}/net/tcp").read_text().splitlines()[1:]
    except OSError:
        return False
    return any(row.split()[1].endswith(f":{port:04X}") and row.split()[3] == TCP_LISTEN for row in rows)


def kill_inside(namespace: str) -> None:
    """SIGKILL every process inside `namespace`, until none is left."""
    deadline = time.monotonic() + GONE_SECONDS
    while (left := pids(namespace)) and time.monotonic() < deadline:
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.1)


def remove(namespace: str) -> None:
    kill_inside(namespace)
    with contextlib.suppress(subprocess.CalledProcessError):
        ip("netns", "del", namespace)
    shutil.rmtree(NETNS_ETC / namespace, ignore_errors=True)


def remove_stale() -> None:
    """Namespaces left by test processes of this kind that are gone (killed before closing)."""
    for line in ip("netns", "list").splitlines():
        namespace = line.split()[0] if line.split() else ""
        owner = namespace[len(PREFIX) :].split("-")[0]
        if namespace.startswith(PREFIX) and owner.isdigit() and not Path(f"/proc/{owner}").exists():
            remove(namespace)


class Host:
    """One machine: a namespace, an address on the bridge, a host name."""

    def __init__(self, namespace: str, name: str, address: str) -> None:
        self.namespace = namespace
        self.name = name
        self.address = address

    def command(self, argv: Sequence[str], mounts: Mapping[str, str | None] | None = None) -> list[str]:
        """`argv` run on this host, under its host name; with `mounts` (folder -> what covers it:
        an empty tmpfs for None, else a bind mount of that folder), in a mount namespace of its
        own: a node that does not see a folder, or sees another tree there."""
        covers = "".join(
            f"mount -t tmpfs mosaic-thidden {shlex.quote(folder)}; "
            if source is None
            else f"mount --bind {shlex.quote(source)} {shlex.quote(folder)}; "
            for folder, source in (mounts or {}).items()
        )
        private = ["--mount"] if mounts else []
        return [
            "ip", "netns", "exec", self.namespace, "unshare", "--uts", *private, "--",
            "sh", "-c", f'hostname "$0"; {covers}exec "$@"', self.name, *argv,
        ]  # fmt: skip

    def popen(
        self, argv: Sequence[str], mounts: Mapping[str, str | None] | None = None, **options: Any
    ) -> subprocess.Popen[bytes]:
        """Start `argv` here; its pid is the command's own (every step execs)."""
        return subprocess.Popen(self.command(argv, mounts), **options)

    def run(self, argv: Sequence[str], **options: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self.command(argv), capture_output=True, text=True, **options)

    def pids(self) -> list[int]:
        return pids(self.namespace)


class Hosts:
    """A bridge and the hosts on it (see the module docstring); a context manager."""

    def __init__(self) -> None:
        remove_stale()
        self.tag = f"{PREFIX}{os.getpid()}"
        self.hub = f"{self.tag}-hub"
        self.hosts: list[Host] = []
        self._namespaces: list[str] = []
        self._add_namespace(self.hub)
        ip("-n", self.hub, "link", "add", "br0", "type", "bridge")
        ip("-n", self.hub, "link", "set", "br0", "up")

    def __enter__(self) -> Hosts:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _add_namespace(self, namespace: str) -> None:
        ip("netns", "add", namespace)
        self._namespaces.append(namespace)
        ip("-n", namespace, "link", "set", "lo", "up")

    def add(self, name: str) -> Host:
        """A new host named `name` (host names of every host resolve on every host)."""
        number = len(self.hosts) + 10
        host = Host(f"{self.tag}-{name}", name, f"{SUBNET}.{number}")
        self._add_namespace(host.namespace)
        port = f"v{number}"
        ip(
            "-n",
            self.hub,
            "link",
            "add",
            port,
            "type",
            "veth",
            "peer",
            "name",
            "eth0",
            "netns",
            host.namespace,
        )
        ip("-n", self.hub, "link", "set", port, "master", "br0", "up")
        ip("-n", host.namespace, "addr", "add", f"{host.address}/24", "dev", "eth0")
        ip("-n", host.namespace, "link", "set", "eth0", "up")
        self.hosts.append(host)
        for each in self.hosts:
            folder = NETNS_ETC / each.namespace
            folder.mkdir(parents=True, exist_ok=True)
            others = "".join(f"{h.address} {h.name}\n" for h in self.hosts if h is not each)
            (folder / "hosts").write_text(f"127.0.0.1 localhost\n127.0.1.1 {each.name}\n{others}")
        return host

    def close(self) -> None:
        for namespace in reversed(self._namespaces):
            remove(namespace)
        self._namespaces.clear()
