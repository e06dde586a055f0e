"""Every dispynode mosaic starts or documents takes a secret (issue 25, item 1).

Real dispynode processes: the local node of `mosaic run --workers N` and a
cluster node started by cluster/start-node.sh. A plain dispy client unrelated to
mosaic (tests/support/mosaic_testing/foreign_client.py), with no secret or a wrong one, runs
nothing on them; mosaic, with the right secret, works.
"""

import operator
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from mosaic.config import Config
from mosaic.corpus.engine import DispyEngine, Task, local_node
from mosaic.corpus.node import read_secret, write_secret
from mosaic.corpus.pipeline import engine_settings, given_up
from mosaic.errors import EngineError
from mosaic_testing.faults import node_path

REPO = Path(__file__).resolve().parents[2]
START_NODE = REPO / "cluster" / "start-node.sh"
MOSAIC = str(Path(sys.executable).parent / "mosaic")
VENV = str(Path(sys.executable).parent.parent)
WRONG = "not-the-secret-0123456789abcdef"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def foreign(host: str, node_port: int, marker: Path, *secret_and_bypass: str) -> tuple[str, str]:
    """Run the foreign client against a node: (its answer, dispy's log lines)."""
    command = [
        sys.executable,
        "-m",
        "mosaic_testing.foreign_client",
        host,
        str(node_port),
        str(free_port()),
        str(marker),
    ]
    done = subprocess.run(
        command + list(secret_and_bypass),
        env={**os.environ, "PYTHONPATH": node_path()},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=120,
    )
    *log, answer = done.stdout.splitlines()
    return answer, "\n".join(log)


def assert_refused(host: str, node_port: int, tmp_path: Path) -> None:
    """A foreign client with no secret or a wrong one runs nothing; the same client made to
    skip its own check of the node's answer (as an attacker's would) is stopped by the node."""
    for name, options, seen in (
        ("none", [], '"secret" mismatch'),  # it did reach the node, and gave up
        ("wrong", [WRONG], '"secret" mismatch'),
        ("bypass", [WRONG, "bypass"], f"Failed to setup {host}"),  # the node refused its code
    ):
        marker = tmp_path / f"foreign-{name}"
        answer, log = foreign(host, node_port, marker, *options)
        assert answer == "did not run", log
        assert seen in log, log
        assert not marker.exists()


def node_of(reaper_owner: psutil.Process) -> psutil.Process:
    """The dispynode a local_node started: the child of the reaper, `reaper_owner`'s child."""
    [reaper] = [p for p in reaper_owner.children() if "mosaic.corpus.reaper" in p.cmdline()]
    [node] = reaper.children()
    return node


def test_the_local_node_runs_only_what_holders_of_its_secret_send(tmp_path):
    workdir = tmp_path / "run"
    workdir.mkdir(mode=0o700)
    with local_node(1, str(workdir), timeout=120) as (port, secret):
        node = node_of(psutil.Process())
        assert not any(secret in word for word in node.cmdline() + list(node.environ().values()))
        assert_refused("127.0.0.1", port + 1, tmp_path)
        for options in ([secret], [secret, "bypass"]):  # the same clients with the secret: they run
            marker = tmp_path / f"foreign-right-{len(options)}"
            assert foreign("127.0.0.1", port + 1, marker, *options)[0] == "ran"
            assert marker.read_text() == "ran"


def test_mosaic_works_with_its_local_node_s_secret_and_each_run_has_a_fresh_one():
    secrets = []
    for _ in range(2):
        with DispyEngine(engine_settings(Config(), None), "!", workers=1) as engine:
            cmdline = node_of(psutil.Process()).cmdline()
            secrets.append(read_secret(cmdline[cmdline.index("--secret-file") + 1]))
            # work(item, context) = item + context: any function the node can import
            assert list(engine.map(Task(operator.add, given_up), [["a", "b"]])) == [["a!", "b!"]]
    assert secrets[0] != secrets[1] and all(len(s) == 64 for s in secrets)


def start_node(tmp_path: Path, port: int, env: dict) -> subprocess.Popen:
    return subprocess.Popen(
        ["bash", str(START_NODE), "127.0.0.6", "1", str(port)],
        env={**os.environ, "MOSAIC_VENV": VENV, "MOSAIC_NODE_DIR": str(tmp_path / "node"), **env},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=(tmp_path / "node.log").open("w"),
        start_new_session=True,
    )


def wait_for_listen(port: int, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + 120
    while True:
        assert process.poll() is None, log.read_text()
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.6", port)) == 0:
                return
        assert time.monotonic() < deadline, "the node never listened"
        time.sleep(0.1)


def test_a_cluster_node_runs_only_what_holders_of_the_secret_send(tmp_path, shared_logs):
    secret_file = tmp_path / "node-secret"
    write_secret(str(secret_file))
    port = 20000 + os.getpid() % 20000
    node = start_node(tmp_path, port, {"MOSAIC_NODE_SECRET_FILE": str(secret_file)})
    try:
        wait_for_listen(port + 1, node, tmp_path / "node.log")
        assert_refused("127.0.0.6", port + 1, tmp_path)
        marker = tmp_path / "foreign-right"  # the same client with the secret: it does run
        answer, log = foreign("127.0.0.6", port + 1, marker, secret_file.read_text())
        assert answer == "ran", log
        assert marker.read_text() == "ran"
        logs = tmp_path / "logs"
        logs.mkdir()
        for log in shared_logs[:2]:
            (logs / log.name).symlink_to(log)
        out = tmp_path / "out"
        config = tmp_path / "config.toml"
        config.write_text(f"dispy_port = {port}\n")  # not 9700, which another dispy client may hold
        command = [MOSAIC, "run", str(logs), "--out", str(out), "--quiet", "--config", str(config)]
        command += ["--nodes", f"127.0.0.6:{port}", "--node-secret-file", str(secret_file)]
        subprocess.run(command, check=True, timeout=300)
        assert (out / "summary.json").exists()
    finally:
        os.killpg(node.pid, 15)
        node.wait(30)


@pytest.mark.parametrize(
    "text, mode, message",
    [
        (None, None, "no node secret file {path}: dispy nodes must not run without a secret"),
        ("x" * 32, 0o640, "(mode 640); run: chmod 600 {path}"),
        ("x" * 32, 0o604, "(mode 604); run: chmod 600 {path}"),
        ("", 0o600, "{path} holds no token"),
        ("x" * 15, 0o600, "at least 16 characters"),
    ],
    ids=["missing", "group-readable", "other-readable", "empty", "15 characters"],
)
def test_start_node_refuses_to_start_without_a_private_secret(tmp_path, text, mode, message):
    path = tmp_path / "home" / ".config" / "mosaic" / "node-secret"  # the default file, under HOME
    path.parent.mkdir(parents=True)
    if text is not None:
        path.write_text(text)
        path.chmod(mode)
    env = {k: v for k, v in os.environ.items() if k != "MOSAIC_NODE_SECRET_FILE"}
    started = subprocess.run(
        ["bash", str(START_NODE), "127.0.0.6", "1", str(free_port())],
        env={**env, "HOME": str(tmp_path / "home"), "MOSAIC_VENV": VENV, "MOSAIC_NODE_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert started.returncode == 2
    assert "refusing to start dispynode" in started.stderr
    assert message.format(path=path) in started.stderr
    assert "Traceback" not in started.stderr


def test_mosaic_run_with_nodes_refuses_a_missing_secret_file_before_any_work(tmp_path, shared_logs):
    missing = tmp_path / "nowhere" / "node-secret"
    command = [MOSAIC, "run", str(shared_logs[0]), "--out", str(tmp_path / "out"), "--nodes", "127.0.0.6"]
    done = subprocess.run(
        command + ["--node-secret-file", str(missing)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1
    assert f"no node secret file {missing}" in done.stderr and "openssl rand -hex 32" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()


def test_a_cluster_engine_without_a_secret_is_refused():
    with pytest.raises(EngineError, match="need a secret"):
        DispyEngine(engine_settings(Config(), None), Config(), nodes=["127.0.0.6"]).__enter__()


def test_a_private_secret_of_16_characters_is_accepted(tmp_path):
    path = tmp_path / "node-secret"
    path.write_text("x" * 16 + "\n")  # surrounding whitespace is not part of it
    path.chmod(0o600)
    check = [sys.executable, "-m", "mosaic.corpus.node", "--secret-file", str(path), "--check"]
    assert subprocess.run(check, capture_output=True, text=True, timeout=60).returncode == 0
    assert read_secret(str(path)) == "x" * 16


def fake_command(folder: Path, name: str, body: str) -> None:
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(f"#!/usr/bin/env bash\n{body}\n")
    path.chmod(0o755)


def test_ssh_nodes_and_the_slurm_job_refuse_before_starting_any_node(tmp_path):
    bin_dir = tmp_path / "bin"  # ssh runs its command here; srun and scontrol leave a mark
    fake_command(bin_dir, "ssh", 'shift; exec bash -c "$1"')
    fake_command(bin_dir, "srun", f"touch {tmp_path}/srun-ran")
    fake_command(bin_dir, "scontrol", "echo node01")
    env = {k: v for k, v in os.environ.items() if k != "MOSAIC_NODE_SECRET_FILE"}
    env.update(PATH=f"{bin_dir}:{env['PATH']}", HOME=str(tmp_path), TMPDIR=str(tmp_path), USER="u")
    env["MOSAIC_VENV"] = VENV
    missing = tmp_path / ".config" / "mosaic" / "node-secret"
    ssh = subprocess.run(
        ["bash", str(REPO / "cluster" / "ssh-nodes.sh"), "start", "node01"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ssh.returncode == 2 and f"no node secret file {missing}" in ssh.stderr
    assert "started dispynode" not in ssh.stdout and not (tmp_path / "mosaic-dispynode-u").exists()
    job = subprocess.run(
        ["bash", str(REPO / "cluster" / "mosaic-run.sbatch"), "in", "out"],
        env={**env, "SLURM_SUBMIT_DIR": str(REPO), "SLURM_JOB_NODELIST": "node01"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert job.returncode == 2 and f"no node secret file {missing}" in job.stderr
    assert not (tmp_path / "srun-ran").exists()


def test_ssh_nodes_starts_a_node_with_the_secret_file_it_is_given(tmp_path):
    bin_dir = tmp_path / "bin"
    fake_command(bin_dir, "ssh", 'shift; exec bash -c "$1"')
    secret_file = tmp_path / "my secrets" / "node secret"  # spaces survive the ssh command line
    secret_file.parent.mkdir()
    write_secret(str(secret_file))
    port = 20000 + (os.getpid() + 11) % 20000
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "TMPDIR": str(tmp_path), "USER": "u"}
    env.update(MOSAIC_VENV=VENV, MOSAIC_NODE_SECRET_FILE=str(secret_file), PORT=str(port), CPUS="1")
    script = str(REPO / "cluster" / "ssh-nodes.sh")
    started = subprocess.run(["bash", script, "start", "node01"], env=env, capture_output=True, text=True)
    assert started.returncode == 0, started.stderr
    folder = tmp_path / "mosaic-dispynode-u"
    pid = int((folder / "dispynode.pid").read_text())
    node = psutil.Process(pid)
    try:
        deadline = time.monotonic() + 120
        while not any(c.status == psutil.CONN_LISTEN for c in node.net_connections(kind="tcp")):
            assert node.is_running() and time.monotonic() < deadline, (folder / "dispynode.log").read_text()
            time.sleep(0.1)
        [address] = {c.laddr.ip for c in node.net_connections(kind="tcp") if c.status == psutil.CONN_LISTEN}
        answer, log = foreign(address, port + 1, tmp_path / "ran", secret_file.read_text())
        assert answer == "ran", log  # the node took the secret of the file it was given
        stopped = subprocess.run(["bash", script, "stop", "node01"], env=env, capture_output=True, text=True)
        assert stopped.returncode == 0 and not (folder / "dispynode.pid").exists(), stopped.stderr
    finally:  # dispynode may take its time to act on the SIGTERM that `stop` sends (it served a client)
        for process in [node, *node.children(recursive=True)]:
            process.kill()
