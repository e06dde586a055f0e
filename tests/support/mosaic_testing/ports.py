"""A free loopback port for a daemon a test starts (mosaic serve, slurmctld, slurmd,
dispynode).

The port is probed, released and then bound by another process, so something else may
take it in between. Binding port 0 hands out a port of the kernel's ephemeral range, which
is exactly where every outgoing connection of the machine gets its local port: on
2026-11-29 CI's slurmctld lost its port that way ("Address already in use", four Slurm
tests in error). Ports are therefore drawn below that range, where only listeners live.
"""

from __future__ import annotations

import random
import socket
from pathlib import Path

LOWEST = 20000  # above the well-known and registered services a test machine runs
EPHEMERAL = Path("/proc/sys/net/ipv4/ip_local_port_range")


def ephemeral_start() -> int:
    """The first port the kernel gives to outgoing connections (32768 when unknown)."""
    try:
        return int(EPHEMERAL.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port(host: str = "127.0.0.1") -> int:
    """A port below the ephemeral range that nothing listens on now."""
    highest = max(LOWEST + 1000, ephemeral_start()) - 1
    for _ in range(200):
        port = random.randint(LOWEST, highest)
        with socket.socket() as probe:
            try:
                probe.bind((host, port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {LOWEST}-{highest} on {host}")
