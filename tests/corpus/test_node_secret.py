"""Every dispynode mosaic starts or documents takes a secret, and a folder no one else can plant in.

Real dispynode processes: the local node of `mosaic run --workers N` and a
cluster node started by cluster/start-node.sh. A plain dispy client unrelated to
mosaic (tests/support/mosaic_testing/foreign_client.py), with no secret or a wrong one, runs
nothing on them; mosaic, with the right secret, works. A folder planted by
another uid (simulated with chown to 65534: the tests run as root) with a
config.pkl that would leave a marker when unpickled is never used.
"""

import operator
import os
import pickle
import pwd
import re
import shutil
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from mosaic.config import Config
from mosaic.corpus.engine import DispyEngine, Task, local_node
from mosaic.corpus.node import private_folder, read_secret, write_secret
from mosaic.corpus.pipeline import engine_settings, given_up
from mosaic.errors import EngineError
from mosaic_testing.faults import node_path
from mosaic_testing.ports import free_port

REPO = Path(__file__).resolve().parents[2]
START_NODE = REPO / "cluster" / "start-node.sh"
MOSAIC = str(Path(sys.executable).parent / "mosaic")
VENV = str(Path(sys.executable).parent.parent)
WRONG = "not-the-secret-0123456789abcdef"
NOBODY = 65534  # "another user"


class Planted:
    """What another user leaves as dispynode's config.pkl: unpickling it creates `marker`
    (as ``os.system(...)`` would run a command)."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return open, (self.marker, "w")


def plant(folder: Path, marker: Path, mode: int = 0o755) -> None:
    """A node folder as another user would prepare it, config.pkl included, all theirs."""
    node = folder / "dispy" / "node"
    node.mkdir(parents=True)
    (node / "config.pkl").write_bytes(pickle.dumps(Planted(marker)))
    for path in (folder, folder / "dispy", node, node / "config.pkl"):
        os.chown(path, NOBODY, NOBODY)
    folder.chmod(mode)


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


def command_of(process: psutil.Process) -> list[str]:
    """Its command line; none for a child another test left unreaped (a zombie has none)."""
    try:
        return process.cmdline()
    except psutil.ZombieProcess:
        return []


def node_of(reaper_owner: psutil.Process) -> psutil.Process:
    """The dispynode a local_node started: the child of the reaper, `reaper_owner`'s child
    (looked for a few seconds: on a loaded machine the reaper may not list it yet)."""
    [reaper] = [p for p in reaper_owner.children() if "mosaic.corpus.reaper" in command_of(p)]
    deadline = time.monotonic() + 10
    while not (children := reaper.children()) and time.monotonic() < deadline:
        time.sleep(0.05)
    [node] = children
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
    """cluster/start-node.sh in its own session; `env` adds to the environment (None: unset)."""
    env = {**os.environ, "MOSAIC_VENV": VENV, "MOSAIC_NODE_DIR": str(tmp_path / "node"), **env}
    return subprocess.Popen(
        ["bash", str(START_NODE), "127.0.0.6", "1", str(port)],
        env={name: value for name, value in env.items() if value is not None},
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


def test_start_node_never_runs_what_another_user_planted_in_tmp(tmp_path):
    shared = tmp_path / "tmp"  # the shared temporary folder, as /tmp: anyone may create in it
    shared.mkdir()
    shared.chmod(0o1777)
    marker = tmp_path / "planted-code-ran"
    plant(shared / "mosaic-dispynode-u", marker)  # the fixed folder of the earlier start-node.sh
    secret_file = tmp_path / "node-secret"
    write_secret(str(secret_file))
    port = 20000 + (os.getpid() + 23) % 20000
    env = {"MOSAIC_NODE_SECRET_FILE": str(secret_file), "MOSAIC_NODE_DIR": None, "TMPDIR": str(shared)}
    node = start_node(tmp_path, port, {**env, "USER": "u"})
    try:
        deadline = time.monotonic() + 120
        while node.poll() is None and time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.6", port + 1)) == 0:
                    break
            time.sleep(0.1)
        assert not marker.exists()
        wait_for_listen(port + 1, node, tmp_path / "node.log")  # and it serves
        folder = Path(psutil.Process(node.pid).cwd()).parents[1]  # dispynode works in FOLDER/dispy/node
        assert folder.parent == shared and folder.name.startswith("mosaic-dispynode-u.")
        status = folder.stat()
        assert (status.st_uid, stat.S_IMODE(status.st_mode)) == (os.geteuid(), 0o700)
    finally:
        os.killpg(node.pid, 15)
        node.wait(30)


def test_start_node_refuses_a_node_dir_of_another_user(tmp_path):
    marker = tmp_path / "planted-code-ran"
    planted = tmp_path / "planted"
    plant(planted, marker, mode=0o700)
    write_secret(str(tmp_path / "node-secret"))
    env = {"MOSAIC_NODE_SECRET_FILE": str(tmp_path / "node-secret"), "MOSAIC_NODE_DIR": str(planted)}
    node = start_node(tmp_path, free_port(), env)
    assert node.wait(60) == 2
    said = (tmp_path / "node.log").read_text()
    assert f"refusing to start dispynode: node folder {planted} is owned by uid {NOBODY}, not by you" in said
    assert "Traceback" not in said and not marker.exists()


def private(path: Path, mode: int = 0o700, owner: int | None = None) -> Path:
    path.mkdir()
    path.chmod(mode)
    if owner is not None:
        os.chown(path, owner, owner)
    return path


@pytest.mark.parametrize("mode", [0o701, 0o710, 0o702, 0o720, 0o704, 0o740])
def test_a_node_folder_others_may_enter_is_refused_with_no_advice_to_close_it(tmp_path, mode):
    folder = private(tmp_path / "node", mode)
    with pytest.raises(EngineError, match=rf"may be entered by group or others \(mode {mode:o}\)") as refused:
        private_folder(str(folder))
    assert "chmod" not in str(refused.value)  # closing it now leaves what was planted while it was open
    assert "leave MOSAIC_NODE_DIR unset for a fresh private folder" in str(refused.value)


def test_a_folder_once_open_to_others_is_refused_after_it_was_closed(tmp_path):
    # Until 2026-11-29 the refusal of an open folder said "run: chmod 700 DIR"; after it,
    # the next start unpickled what another user had planted while the folder was open.
    marker = tmp_path / "planted-code-ran"
    folder = private(tmp_path / "node", 0o777)
    plant(folder / "planted", marker)  # another user's files inside (a whole planted tree)
    (folder / "planted").rename(folder / "dispy")  # renamed into place while the folder was open
    folder.chmod(0o700)  # what the old message advised
    write_secret(str(tmp_path / "node-secret"))
    env = {"MOSAIC_NODE_SECRET_FILE": str(tmp_path / "node-secret"), "MOSAIC_NODE_DIR": str(folder)}
    node = start_node(tmp_path, free_port(), env)
    try:
        assert node.wait(60) == 2
    finally:
        if node.poll() is None:
            os.killpg(node.pid, 9)
    said = (tmp_path / "node.log").read_text()
    assert f"refusing to start dispynode: node folder {folder} is not empty (dispy)" in said
    assert "chmod" not in said and "Traceback" not in said and not marker.exists()


@pytest.mark.parametrize(
    "entries, shown",
    [(["a"], "(a)"), (["c", "a", "b"], "(a, b, c)"), (["d", "c", "a", "b"], "(a, b, c, ...)")],
)
def test_a_private_folder_of_one_s_own_that_holds_anything_is_refused(tmp_path, entries, shown):
    folder = private(tmp_path / "node")
    for name in entries:
        (folder / name).write_text("")
    with pytest.raises(EngineError, match=re.escape(f"node folder {folder} is not empty {shown}")):
        private_folder(str(folder))


def test_a_node_folder_is_created_private_or_taken_when_private_and_one_s_own(tmp_path):
    made = private_folder(str(tmp_path / "new"))
    assert made == str(tmp_path / "new")
    status = os.stat(made)
    assert (status.st_uid, stat.S_IMODE(status.st_mode)) == (os.geteuid(), 0o700)
    assert private_folder(made) == made  # the same folder again, still empty and private: accepted
    private(tmp_path / "link-target")
    (tmp_path / "via-link").symlink_to(tmp_path / "link-target")  # a link above the folder is resolved
    private(tmp_path / "link-target" / "node")
    assert private_folder(str(tmp_path / "via-link" / "node")) == str(tmp_path / "link-target" / "node")


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda t: private(t / "node", owner=NOBODY), f"is owned by uid {NOBODY}, not by you"),
        (lambda t: (t / "node").symlink_to(private(t / "mine")), "is not a folder (a link is refused)"),
        (lambda t: (t / "node").write_text(""), "is not a folder"),
    ],
    ids=["another user's", "a link to a private folder", "a file"],
)
def test_a_node_folder_that_is_not_one_s_own_folder_is_refused(tmp_path, make, message):
    make(tmp_path)
    with pytest.raises(EngineError, match=re.escape(f"node folder {tmp_path / 'node'} {message}")):
        private_folder(str(tmp_path / "node"))


@pytest.mark.parametrize(
    "mode, owner, refused",
    [
        (0o755, None, False),
        (0o1777, None, False),  # as /tmp: others create, but may not rename or remove what is not theirs
        (0o1777, NOBODY, True),  # its owner may
        (0o775, None, True),
        (0o757, None, True),
        (0o777, None, True),
        (0o755, NOBODY, True),
    ],
)
def test_a_node_folder_is_refused_under_a_folder_others_may_change(tmp_path, mode, owner, refused):
    above = private(tmp_path / "above", mode, owner)
    folder = above / "node"
    folder.mkdir(mode=0o700)
    if not refused:
        assert private_folder(str(folder)) == str(folder)
        return
    with pytest.raises(
        EngineError,
        match=re.escape(
            f"node folder {folder}: {above} (uid {os.geteuid() if owner is None else owner}, mode {mode:o})"
        ),
    ):
        private_folder(str(folder))


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
    fake_command(bin_dir, "ssh", 'shift; exec bash -c "$*"')  # as ssh: the words, joined
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
    assert "started dispynode" not in ssh.stdout and not list(tmp_path.glob("mosaic-dispynode-u*"))
    job = subprocess.run(
        ["bash", str(REPO / "cluster" / "mosaic-run.sbatch"), "in", "out"],
        cwd=REPO,
        env={**env, "SLURM_JOB_NUM_NODES": "1", "SLURM_NTASKS": "1"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert job.returncode == 2 and f"no node secret file {missing}" in job.stderr
    assert not (tmp_path / "srun-ran").exists()


def test_the_slurm_job_gives_each_node_a_fresh_folder_not_one_named_by_the_job_s_ids(tmp_path):
    repo = tmp_path / "repo"  # the submission folder: the job script, a start-node.sh that tells
    (repo / "cluster").mkdir(parents=True)  # which folder it was given, a mosaic that waits for it
    shutil.copy(REPO / "cluster" / "mosaic-run.sbatch", repo / "cluster")
    told = tmp_path / "node-dir"
    fake_command(
        repo / "cluster",
        "start-node.sh",
        f'stat -c "%n %a %U" "${{MOSAIC_NODE_DIR-unset}}" > {told}.new; mv {told}.new {told}',
    )
    (repo / ".venv").mkdir()
    fake_command(repo / ".venv" / "bin", "python", f'exec {sys.executable} "$@"')
    fake_command(
        repo / ".venv" / "bin", "mosaic", f"for _ in $(seq 300); do [ -s {told} ] && exit; sleep 0.1; done"
    )
    bin_dir = tmp_path / "bin"
    fake_command(bin_dir, "srun", 'while [[ $1 == --* ]]; do shift; done; exec "$@"')  # on "each node": here
    fake_command(bin_dir, "squeue", "true")
    write_secret(str(tmp_path / "node-secret"))
    (tmp_path / "tmp").mkdir(mode=0o700)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "TMPDIR": str(tmp_path / "tmp")}
    env.update(MOSAIC_NODE_SECRET_FILE=str(tmp_path / "node-secret"), MOSAIC_NODE_DIR=str(tmp_path / "mine"))
    env.update(SLURM_JOB_NUM_NODES="1", SLURM_NTASKS="1", SLURM_NTASKS_PER_NODE="1", SLURM_LOCALID="0")
    env.update(SLURM_JOB_ID="42", SLURM_CPUS_ON_NODE="2")
    job = subprocess.run(
        ["bash", str(repo / "cluster" / "mosaic-run.sbatch"), "in", "out"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert job.returncode == 0, job.stderr
    folder, mode, owner = told.read_text().split()
    # not the submitter's own (nodes would share it), nor a name made of the job's ids: mktemp's
    assert Path(folder).parent == tmp_path / "tmp" and Path(folder).name.startswith("mosaic-dispynode-")
    assert (mode, owner) == ("700", pwd.getpwuid(os.getuid()).pw_name)
    assert list((tmp_path / "tmp").iterdir()) == []  # removed with the node, as the node list


def test_the_slurm_job_refuses_more_tasks_than_machines_on_several_machines(tmp_path):
    # dispy tells nodes apart by address: two nodes of one machine would be taken for one
    bin_dir = tmp_path / "bin"
    fake_command(bin_dir, "srun", f"touch {tmp_path}/srun-ran")
    write_secret(str(tmp_path / "node-secret"))
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "TMPDIR": str(tmp_path)}
    env.update(MOSAIC_NODE_SECRET_FILE=str(tmp_path / "node-secret"), SLURM_JOB_NUM_NODES="2")
    for tasks, refused in (("2", False), ("3", True)):
        job = subprocess.run(
            ["bash", str(REPO / "cluster" / "mosaic-run.sbatch"), "in", "out"],
            cwd=REPO,
            env={**env, "SLURM_NTASKS": tasks},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert (job.returncode == 2) == refused, job.stderr
        assert ("3 tasks on 2 machines" in job.stderr) == refused
        assert (tmp_path / "srun-ran").exists() != refused
        (tmp_path / "srun-ran").unlink(missing_ok=True)


def test_ssh_nodes_starts_a_node_with_the_secret_file_it_is_given(tmp_path):
    bin_dir = tmp_path / "bin"
    fake_command(bin_dir, "ssh", 'shift; exec bash -c "$*"')  # as ssh: the words, joined
    secret_file = tmp_path / "my secrets" / "node secret"  # spaces survive the ssh command line
    secret_file.parent.mkdir()
    write_secret(str(secret_file))
    port = 20000 + (os.getpid() + 11) % 20000
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "TMPDIR": str(tmp_path), "USER": "u"}
    env.update(MOSAIC_VENV=VENV, MOSAIC_NODE_SECRET_FILE=str(secret_file), PORT=str(port), CPUS="1")
    script = str(REPO / "cluster" / "ssh-nodes.sh")
    marker = tmp_path / "planted-code-ran"
    plant(tmp_path / "mosaic-dispynode-u", marker)  # the fixed folder of the earlier ssh-nodes.sh
    decoy = subprocess.Popen(["sleep", "600"])  # a process of ours that another user's PID file names
    plant(tmp_path / "mosaic-dispynode-u.planted", marker, mode=0o700)
    (tmp_path / "mosaic-dispynode-u.planted" / "dispynode.pid").write_text(str(decoy.pid))
    node = None
    try:
        started = subprocess.run(["bash", script, "start", "node01"], env=env, capture_output=True, text=True)
        assert started.returncode == 0, started.stderr
        [folder] = set(tmp_path.glob("mosaic-dispynode-u.*")) - {tmp_path / "mosaic-dispynode-u.planted"}
        status = folder.stat()
        assert (status.st_uid, stat.S_IMODE(status.st_mode)) == (os.geteuid(), 0o700)
        node = psutil.Process(int((folder / "dispynode.pid").read_text()))
        deadline = time.monotonic() + 120
        while not any(c.status == psutil.CONN_LISTEN for c in node.net_connections(kind="tcp")):
            assert node.is_running() and time.monotonic() < deadline, (folder / "dispynode.log").read_text()
            time.sleep(0.1)
        [address] = {c.laddr.ip for c in node.net_connections(kind="tcp") if c.status == psutil.CONN_LISTEN}
        answer, log = foreign(address, port + 1, tmp_path / "ran", secret_file.read_text())
        assert answer == "ran", log  # the node took the secret of the file it was given
        assert not marker.exists()
        tree = [node, *node.children(recursive=True)]
        node.suspend()  # a node that does not end on SIGTERM: `stop` kept its folder and left it running
        stopped = subprocess.run(["bash", script, "stop", "node01"], env=env, capture_output=True, text=True)
        assert stopped.returncode == 0 and not folder.exists(), stopped.stderr
        assert psutil.wait_procs(tree, timeout=10)[1] == []  # the node and all it started
        assert decoy.poll() is None  # another user's PID file: not read
    finally:
        decoy.kill()
        decoy.wait()
        if node is not None and node.is_running():
            for process in [node, *node.children(recursive=True)]:
                process.kill()
