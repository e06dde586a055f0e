"""cluster/slurm-epilog.sh posts the finished job's log to a live service."""

from __future__ import annotations

import subprocess
from datetime import datetime
from pathlib import Path

import httpx

EPILOG = Path(__file__).resolve().parents[2] / "cluster" / "slurm-epilog.sh"


def today_folder(root: Path) -> Path:
    now = datetime.now()
    folder = root / str(now.year) / str(now.month) / str(now.day)
    folder.mkdir(parents=True)
    return folder


def run_epilog(env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(EPILOG)],
        env={"PATH": "/usr/bin:/bin", **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_epilog_posts_only_the_jobs_logs(server, log_factory, tmp_path, write_secret):
    folder = today_folder(tmp_path)
    (folder / "alice_lmp_id31337_3-14-1234-99_1.darshan").write_bytes(log_factory(job_id=31337, uid=31))
    (folder / "alice_lmp_id313370_3-14-1234-98_1.darshan").write_bytes(  # another job
        log_factory(job_id=313370, uid=31)
    )
    (folder / "bob_lmp_id31337_3-14-1234-97_1.darshan").write_bytes(  # another user
        log_factory(job_id=31337, uid=32)
    )
    write_secret(tmp_path / "token", server.token + "\n")
    done = run_epilog(
        {
            "SLURM_JOB_ID": "31337",
            "SLURM_JOB_USER": "alice",
            "DARSHAN_LOGDIR": str(tmp_path),
            "MOSAIC_URL": server.url,
            "MOSAIC_TOKEN_FILE": str(tmp_path / "token"),
        }
    )
    assert done.returncode == 0
    assert "categorized alice_lmp_id31337_3-14-1234-99_1.darshan" in done.stderr
    with server.client() as client:
        runs = client.get("/v1/jobs/31337").json()["runs"]
        assert len(runs) == 1 and runs[0]["application"]["uid"] == 31
        assert client.get("/v1/jobs/313370").status_code == 404
        assert client.get("/v1/applications", params={"uid": 32, "app": "/apps/lmp"}).status_code == 404


def test_epilog_reports_but_never_fails(server, log_factory, tmp_path):
    folder = today_folder(tmp_path)
    (folder / "carol_lmp_id555_1-1-1-1_1.darshan").write_bytes(log_factory(job_id=555))
    base = {"SLURM_JOB_ID": "555", "SLURM_JOB_USER": "carol", "DARSHAN_LOGDIR": str(tmp_path)}
    cases = {
        "without token": ({**base, "MOSAIC_URL": server.url}, "service answered 401"),
        "no such log": ({**base, "SLURM_JOB_ID": "556", "MOSAIC_URL": server.url}, "no Darshan log"),
        "no log dir": ({**base, "DARSHAN_LOGDIR": str(tmp_path / "absent")}, "not a directory"),
        "no job": ({"DARSHAN_LOGDIR": str(tmp_path)}, "must be set"),
        "service down": ({**base, "MOSAIC_URL": "http://127.0.0.1:9"}, "service answered 000"),
    }
    for name, (env, message) in cases.items():
        done = run_epilog(env)
        assert done.returncode == 0, name
        assert message in done.stderr, (name, done.stderr)
    assert httpx.get(server.url + "/healthz").status_code == 200
