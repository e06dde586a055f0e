"""cluster/cli_filter.lua under each real interpreter Slurm's lua plugins may link (Lua 5.1,
as Debian's Slurm does, 5.2, 5.3, 5.4 and LuaJIT; run_cli_filter.lua plays the plugin),
its io.popen running the real curl against a live `mosaic serve`: the application's period
class goes in the job's comment, found past launchers' options, environment settings and
wrapper scripts; nothing else changes the job."""

from __future__ import annotations

import os
import urllib.parse
from pathlib import Path

import pytest

from mosaic_testing.joblogs import periodic_logs

CHECKPOINT_UID, STEADY_UID = 5252, 5353
CHECKPOINTER = "/apps/ckpt"
APP_NOTE = "mosaic_app=/apps/ckpt"  # the application, for the prolog
CLASS = "mosaic_period_class=2 " + APP_NOTE
PRELOAD = "/opt/darshan/lib/libdarshan.so"


@pytest.fixture(scope="module")
def checkpointer(server, log_factory):
    """In the server shared by this test run: a group whose writes recur every 600 s (period
    class 2), and one that is not periodic."""
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


@pytest.fixture
def lua(cli_filter, checkpointer, tmp_path, write_secret):
    """A function running the filter's slurm_cli_pre_submit under one interpreter, in
    ``tmp_path``: (return code, comment after or None, log lines)."""
    write_secret(tmp_path / "token", checkpointer.token + "\n")
    env = {
        "PATH": os.environ["PATH"],
        "MOSAIC_URL": checkpointer.url,
        "MOSAIC_TOKEN_FILE": str(tmp_path / "token"),
    }

    def run(kind: str, argv: list[str], comment: str = "", uid: int = CHECKPOINT_UID, **extra: str):
        return cli_filter(kind, uid, comment, argv, {**env, **extra}, tmp_path)

    return run


def sbatch(lua, tmp_path: Path, script: str, comment: str = "") -> str | None:
    (tmp_path / "job.sh").write_text("#!/bin/bash\n#SBATCH -N 2\nmodule load x\n" + script)
    code, after, _ = lua("sbatch", [str(tmp_path / "job.sh")], comment)
    assert code == 0
    return after


def test_the_period_class_goes_in_the_comment(lua, tmp_path):
    assert lua("srun", [CHECKPOINTER, "-in", "x"]) == (
        0,
        CLASS,
        [f"mosaic: {CHECKPOINTER} has I/O period class 2"],
    )
    assert (
        sbatch(lua, tmp_path, f"srun -n 8 --mpi=pmix {CHECKPOINTER} -in in.1\n", "nightly")
        == f"nightly {CLASS}"
    )
    assert sbatch(lua, tmp_path, f"#MOSAIC app={CHECKPOINTER}\n./run.sh /data\n") == CLASS


@pytest.mark.parametrize(
    "line",
    [
        f"mpirun -np 4 -x LD_PRELOAD={PRELOAD} {CHECKPOINTER} -in in.1",  # Open MPI's way to preload Darshan
        f"mpirun -x LD_PRELOAD={PRELOAD} --hostfile /etc/hosts {CHECKPOINTER}",
        f"mpiexec -n 4 -genv LD_PRELOAD {PRELOAD} {CHECKPOINTER}",  # MPICH, Intel MPI
        f"srun --export ALL,LD_PRELOAD={PRELOAD} {CHECKPOINTER}",
        f"srun --export=ALL,LD_PRELOAD={PRELOAD} -n 2 {CHECKPOINTER}",
        f"env LD_PRELOAD={PRELOAD} srun -n 4 {CHECKPOINTER}",
        f"srun env LD_PRELOAD={PRELOAD} OMP_NUM_THREADS=2 {CHECKPOINTER}",
        f"LD_PRELOAD={PRELOAD} time -o /tmp/t srun {CHECKPOINTER}",
        f"mpirun --np 4 {CHECKPOINTER}",  # an option it does not list, with its value
        "srun -n 2 ./run.sh in.1",  # a wrapper script: what it runs
    ],
)
def test_the_application_is_found_past_launchers_and_wrappers(lua, tmp_path, line):
    (tmp_path / "run.sh").write_text(
        "#!/bin/bash\nmodule load ckpt\nexport OMP_NUM_THREADS=4\ncd /scratch\n"
        f'exec {CHECKPOINTER} -in "$1"\n'
    )
    assert sbatch(lua, tmp_path, line + "\n") == CLASS


def test_srun_of_a_wrapper_and_env(lua, tmp_path):
    (tmp_path / "wrap.sh").write_text(f"#!/bin/sh\nLD_PRELOAD={PRELOAD} {CHECKPOINTER} $@\n")
    assert lua("srun", ["./wrap.sh", "-in", "x"])[1] == CLASS
    assert lua("srun", ["env", f"LD_PRELOAD={PRELOAD}", CHECKPOINTER])[1] == CLASS


def test_the_job_is_left_alone_without_a_class(lua, tmp_path):
    nothing = (0, None, [])
    # The application alone: the prolog still learns what the job runs.
    assert lua("srun", ["/apps/unknown"]) == (0, "mosaic_app=/apps/unknown", [])  # 404
    assert lua("srun", ["/apps/lmp"], uid=STEADY_UID) == (0, "mosaic_app=/apps/lmp", [])  # no class
    assert lua("srun", [CHECKPOINTER], SLURM_JOB_ID="12") == nothing  # a step inside a job
    absent = str(tmp_path / "absent")
    assert lua("srun", [CHECKPOINTER], MOSAIC_TOKEN_FILE=absent) == (0, APP_NOTE, [])  # 401
    assert lua("srun", [CHECKPOINTER], MOSAIC_URL="http://127.0.0.1:9") == (0, APP_NOTE, [])  # nobody there
    assert sbatch(lua, tmp_path, "hostname\n./prepare.sh\n") is None  # nothing launched


STRANGE = "/apps/my app/x=1%+'\"\\é\tend"


def test_the_application_goes_in_the_comment_as_one_encoded_word(lua, tmp_path):
    """Every byte but A-Z a-z 0-9 / . _ ~ - percent-encoded: one word, no quote, "=", "%" or
    "+" (a query string's space) left; decoded, the path as it was. A mosaic_app= word of the
    user's is replaced by the filter's."""
    encoded = "/apps/my%20app/x%3D1%25%2B%27%22%5C%C3%A9%09end"
    assert urllib.parse.unquote(encoded) == STRANGE
    assert lua("srun", [STRANGE], "nightly") == (0, f"nightly mosaic_app={encoded}", [])
    assert lua("srun", ["/apps/b"], "mosaic_app=/fake x mosaic_app=/other") == (0, "x mosaic_app=/apps/b", [])
    named = sbatch(lua, tmp_path, "#MOSAIC app=/apps/ckpt\n./run.sh\n", "mosaic_app=/fake")
    assert named == CLASS
