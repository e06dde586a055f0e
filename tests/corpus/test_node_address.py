"""cluster/node-address.sh, the address a node of mosaic-run.sbatch listens on, in a network
namespace of a machine with two networks where the first address `hostname -I` lists is not
the one facing the run's machine (a docker bridge, a second network): the node used to
listen there and the run waited for it in vain."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "cluster" / "node-address.sh"
OTHER, FACING, PEER = "10.79.0.2", "10.78.0.2", "10.78.0.1"  # PEER: where `mosaic run` runs

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("ip") is None, reason="network namespaces need root and iproute2"
)


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


def test_the_node_listens_on_the_interface_facing_the_run():
    namespace = f"infra-addr-{os.getpid()}"
    ip("netns", "add", namespace)
    try:
        for device, address in (("other0", OTHER), ("facing0", FACING)):  # listed in this order
            ip("-n", namespace, "link", "add", device, "type", "veth", "peer", "name", f"{device}p")
            ip("-n", namespace, "addr", "add", f"{address}/24", "dev", device)
            for end in (device, f"{device}p"):
                ip("-n", namespace, "link", "set", end, "up")
        ip("-n", namespace, "link", "set", "lo", "up")

        def run(*args: str) -> str:
            command = ["ip", "netns", "exec", namespace, "bash", str(SCRIPT), *args]
            return subprocess.run(command, check=True, capture_output=True, text=True).stdout.strip()

        listed = subprocess.run(
            ["ip", "netns", "exec", namespace, "hostname", "-I"], check=True, capture_output=True, text=True
        ).stdout.split()
        assert listed[0] == OTHER  # what the script took before
        assert run(PEER) == FACING
        assert run(FACING) == FACING  # on the run's own machine
        assert run() == OTHER  # no peer: the first address, as start-node.sh's default
        assert run("192.0.2.77") == OTHER  # no route there
    finally:
        ip("netns", "del", namespace)
