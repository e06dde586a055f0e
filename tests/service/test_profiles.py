"""Profiles through the service: concurrent posts to two real servers sharing one SQLite
store lose no run, the OpenAPI schema documents the answer, and cluster/cli_filter.lua
(run by Lua 5.4 through lupa, with its io.popen running the real curl) puts the period
class in a job's comment."""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest

from mosaic.config import Config
from mosaic.synth.corpus import Identity, generate_runs
from mosaic.synth.scenarios import Periodic, Scenario

CLI_FILTER = Path(__file__).resolve().parents[2] / "cluster" / "cli_filter.lua"
POSTS, CLIENTS = 24, 8
CONCURRENT_UID, CHECKPOINT_UID, STEADY_UID = 5151, 5252, 5353
CHECKPOINTER = "/apps/ckpt"


def test_concurrent_posts_of_one_group_lose_no_run(twin_servers, log_factory):
    """CLIENTS threads, each its own HTTP connection to one of two `mosaic serve` processes on
    one store file, post POSTS runs of one group at once: every run counted once."""
    # every third run writes at its end, the others at its start
    logs = [
        log_factory(
            job_id=9000 + i, uid=CONCURRENT_UID, write_window=(90.0, 99.0) if i % 3 == 0 else (1.0, 5.0)
        )
        for i in range(POSTS)
    ]
    statuses: list[int] = []
    start = threading.Barrier(CLIENTS)  # the clients start posting together

    def post(client_index: int) -> None:
        with twin_servers[client_index % 2].client() as client:
            start.wait(timeout=60)
            for i in range(client_index, POSTS, CLIENTS):
                answer = client.post("/v1/categorize", params={"store": "true"}, content=logs[i])
                statuses.append(answer.status_code)

    threads = [threading.Thread(target=post, args=(c,)) for c in range(CLIENTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert statuses == [200] * POSTS
    answers = []
    for server in twin_servers:
        with server.client() as client:
            answers.append(client.get("/v1/applications", params={"uid": CONCURRENT_UID, "app": "/apps/lmp"}))
            assert all(client.get(f"/v1/jobs/{9000 + i}").status_code == 200 for i in range(POSTS))
    assert [a.status_code for a in answers] == [200, 200] and answers[0].json() == answers[1].json()
    answer = answers[0].json()
    profile = answer["profile"]
    assert answer["runs"] == profile["runs"] == POSTS and profile["basis"] == "every_run"
    assert profile["label_shares"] == {
        "metadata_insignificant_load": 1.0,
        "read_insignificant": 1.0,
        "write_on_end": 8 / 24,
        "write_on_start": 16 / 24,
    }
    assert profile["stability"] == 16 / 24
    assert profile["write"]["bytes"]["median"] == 2e8 and profile["period_class"] is None


def test_the_openapi_schema_documents_the_profile(server):
    with server.client() as client:
        schema = client.get("/openapi.json").json()
    answer = schema["paths"]["/v1/applications"]["get"]["responses"]["200"]["content"]["application/json"]
    # with app, one application; without, the list
    refs = [
        {"$ref": "#/components/schemas/ApplicationAnswer"},
        {"$ref": "#/components/schemas/ApplicationList"},
    ]
    assert answer["schema"]["anyOf"] == refs
    models = schema["components"]["schemas"]
    assert "every page" in models["ApplicationList"]["properties"]["total"]["description"]
    profile = models["ApplicationProfile"]["properties"]
    assert "power of ten" in models["PeriodicProfile"]["properties"]["period_class"]["description"].lower()
    assert {"stability", "label_shares", "period_class", "read", "write", "first_seen"} <= set(profile)
    assert set(models["Spread"]["required"]) == {"median", "p10", "p90", "runs"}


def periodic_logs(uid: int, app: str, period: float, runs: int) -> list[bytes]:
    """Logs of one group whose writes recur every ``period`` seconds (the synth generator)."""
    scenario = Scenario(
        "profile_checkpoints",
        ranks=4,
        run_time=None,
        periodic=(Periodic("write", period, 0.1, 2e9, 10, shared=True),),
        runs=runs,
    )
    rng = np.random.default_rng(uid)
    made = generate_runs(
        scenario, rng, Identity(uid, f"u{uid}", app), "ckpt", 1_600_000_000, 10 * uid, Config()
    )
    return [run.data for run in made]


@pytest.fixture(scope="module")
def checkpointer(server, log_factory):
    """In the server shared by this test run: a group whose writes recur every 600 s (period class 2),
    and one that is not periodic."""
    with server.client() as client:
        for data in [
            *periodic_logs(CHECKPOINT_UID, CHECKPOINTER, 600.0, 3),
            log_factory(uid=STEADY_UID, job_id=STEADY_UID),
        ]:
            assert client.post("/v1/categorize", params={"store": "true"}, content=data).status_code == 200
        profile = client.get("/v1/applications", params={"uid": CHECKPOINT_UID, "app": CHECKPOINTER}).json()
        steady = client.get("/v1/applications", params={"uid": STEADY_UID, "app": "/apps/lmp"}).json()
    assert profile["profile"]["period_class"] == 2 and profile["profile"]["runs"] == 3
    assert steady["profile"]["runs"] == 1 and steady["profile"]["period_class"] is None
    return server


class Pipe:
    """What the filter's io.popen gets: the real command in a shell."""

    def __init__(self, command: str, mode: str):
        self.process = subprocess.Popen(
            command,
            shell=True,
            stdin=subprocess.PIPE if mode == "w" else None,
            stdout=subprocess.PIPE if mode == "r" else None,
            text=True,
        )

    def write(self, text: str) -> None:
        self.process.stdin.write(text)

    def read(self, what: str = "l") -> str | None:
        line = self.process.stdout.readline() if what == "l" else self.process.stdout.read()
        return line.rstrip("\n") if what == "l" else line

    def close(self) -> bool:
        for stream in (self.process.stdin, self.process.stdout):
            if stream:
                stream.close()
        return self.process.wait(timeout=30) == 0


def run_filter(options: dict, argv: list[str]) -> tuple[int, dict, list[str]]:
    """slurm_cli_pre_submit of cluster/cli_filter.lua: (return code, options after, log lines)."""
    from lupa import lua54

    lua = lua54.LuaRuntime()
    logs: list[str] = []
    lua.globals().PY_POPEN = Pipe
    lua.globals().PY_LOG = logs.append
    lua.execute(
        """
        slurm = {SUCCESS = 0, ERROR = -1}
        function slurm.log_info(fmt, ...) PY_LOG(string.format(fmt, ...)) end
        slurm.log_error = slurm.log_info
        io.popen = function(command, mode)
            local pipe = PY_POPEN(command, mode)
            return {write = function(self, text) pipe.write(text) end,
                    read = function(self, what) return pipe.read(what) end,
                    close = function(self) return pipe.close() end}
        end
        """
    )
    lua.execute(CLI_FILTER.read_text())
    table = lua.table_from(options)
    table.argv = lua.table_from(argv)
    code = lua.globals().slurm_cli_pre_submit(table, 0)
    return code, {key: table[key] for key in ("comment",)}, logs


@pytest.fixture
def filter_env(checkpointer, tmp_path, monkeypatch, write_secret):
    write_secret(tmp_path / "token", checkpointer.token + "\n")
    monkeypatch.setenv("MOSAIC_URL", checkpointer.url)
    monkeypatch.setenv("MOSAIC_TOKEN_FILE", str(tmp_path / "token"))
    for name in ("MOSAIC_APP", "SLURM_JOB_ID"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def test_cli_filter_puts_the_period_class_in_the_comment(filter_env):
    code, after, logs = run_filter({"type": "srun", "uid": str(CHECKPOINT_UID)}, [CHECKPOINTER, "-in", "x"])
    assert code == 0 and after["comment"] == "mosaic_period_class=2"
    assert logs == [f"mosaic: {CHECKPOINTER} has I/O period class 2"]
    script = filter_env / "job.sh"
    script.write_text(
        f"#!/bin/bash\n#SBATCH -N 2\nmodule load x\nsrun -n 8 --mpi=pmix {CHECKPOINTER} -in in.1\n"
    )
    options = {"type": "sbatch", "uid": str(CHECKPOINT_UID), "comment": "nightly"}
    code, after, _ = run_filter(options, [str(script)])
    assert code == 0 and after["comment"] == "nightly mosaic_period_class=2"
    script.write_text(f"#!/bin/bash\n#MOSAIC app={CHECKPOINTER}\n./run.sh /data\n")
    assert run_filter({"type": "sbatch", "uid": str(CHECKPOINT_UID)}, [str(script)])[1]["comment"] == (
        "mosaic_period_class=2"
    )


def test_cli_filter_leaves_the_job_alone_without_a_class(filter_env, monkeypatch):
    uid = {"type": "srun", "uid": str(CHECKPOINT_UID)}
    assert run_filter(uid, ["/apps/unknown"]) == (0, {"comment": None}, [])  # 404
    assert run_filter({**uid, "uid": str(STEADY_UID)}, ["/apps/lmp"]) == (0, {"comment": None}, [])
    monkeypatch.setenv("SLURM_JOB_ID", "12")  # a step inside a job
    assert run_filter(uid, [CHECKPOINTER]) == (0, {"comment": None}, [])
    monkeypatch.delenv("SLURM_JOB_ID")
    monkeypatch.setenv("MOSAIC_TOKEN_FILE", str(filter_env / "absent"))  # 401
    assert run_filter(uid, [CHECKPOINTER]) == (0, {"comment": None}, [])
    monkeypatch.setenv("MOSAIC_URL", "http://127.0.0.1:9")  # nobody there
    assert run_filter(uid, [CHECKPOINTER]) == (0, {"comment": None}, [])
