"""Making interference logs for real (where darshan-runtime, IOR, mpirun and root are at
hand; skipped otherwise: the suite uses the committed logs of
tests/data/darshan-logs-interference). Two jobs share a 20 MB/s throttle: the victim's
I/O time beside an aggressor exceeds its time alone; nothing is left behind."""

import shutil
import subprocess
import time
from pathlib import Path

import pytest

from mosaic_testing.throttled import ior_job, missing_tools, throttled_fs

VICTIM = ["-a", "POSIX", "-w", "-e", "-k", "--posix.odirect", "-F", "-i", "2", "-b", "8m", "-t", "1m"]
AGGRESSOR = ["-a", "POSIX", "-w", "-e", "-k", "--posix.odirect", "-i", "1", "-b", "40m", "-t", "4m"]


def _posix_time(log: Path) -> float:
    darshan = pytest.importorskip("darshan")
    report = darshan.DarshanReport(str(log), read_all=True)
    fcounters = report.records["POSIX"].to_df()["fcounters"]
    return float((fcounters["POSIX_F_WRITE_TIME"] + fcounters["POSIX_F_READ_TIME"]).max())


def test_a_victim_beside_an_aggressor_is_slower_and_nothing_is_left(tmp_path):
    lacking = missing_tools()
    if lacking:
        pytest.skip(f"cannot make interference logs here: no {', '.join(lacking)}")
    ior = shutil.which("ior")
    apps = tmp_path / "bin"
    apps.mkdir()
    for name in ("lmp_restart", "hdf_bulk"):
        shutil.copy(ior, apps / name)  # each copy is its own application
    logs = tmp_path / "logs"
    logs.mkdir()
    with throttled_fs(tmp_path, 20_000_000) as fs:
        alone = ior_job(fs, apps / "lmp_restart", VICTIM, 1, logs / "alone.darshan")
        assert alone.wait(timeout=120) == 0, alone.stderr.read() if alone.stderr else ""
        aggressor = ior_job(fs, apps / "hdf_bulk", AGGRESSOR, 2, logs / "aggressor.darshan")
        time.sleep(0.5)
        beside = ior_job(fs, apps / "lmp_restart", VICTIM, 3, logs / "beside.darshan")
        assert beside.wait(timeout=120) == 0 and aggressor.wait(timeout=120) == 0
        device, mount = fs.device, fs.mount
    assert _posix_time(logs / "beside.darshan") > 1.3 * _posix_time(logs / "alone.darshan")
    assert subprocess.run(["findmnt", str(mount)], capture_output=True).returncode != 0  # unmounted
    assert device not in subprocess.run(["losetup", "-a"], capture_output=True, text=True).stdout


def _dd(fs, name: str) -> subprocess.Popen:
    command = (
        f'echo $$ > "{fs.procs}" && exec dd if=/dev/zero of="{fs.mount}/{name}" bs=1M count=8 oflag=direct'
    )
    return subprocess.Popen(["sh", "-c", command], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _timed(*jobs: subprocess.Popen) -> float:
    start = time.perf_counter()
    assert all(job.wait(timeout=60) == 0 for job in jobs)
    return time.perf_counter() - start


def test_the_throttle_is_shared_and_everything_is_undone(tmp_path):
    """The fixture's parts without Darshan: two O_DIRECT writers in the 8 MB/s throttle take
    about twice as long as one (8 MiB each: ~1.05 s alone, ~2.1 s together)."""
    if (
        any(shutil.which(tool) is None for tool in ("losetup", "mkfs.ext4", "dd"))
        or Path("/dev/loop-control").exists() is False
    ):
        pytest.skip("no loop devices or tools")
    try:
        with throttled_fs(tmp_path, 8_000_000, size_bytes=256 << 20) as fs:
            alone = _timed(_dd(fs, "a"))
            together = _timed(_dd(fs, "b"), _dd(fs, "c"))
            device, mount, group = fs.device, fs.mount, fs.procs.parent
    except (subprocess.CalledProcessError, PermissionError, OSError) as error:
        pytest.skip(f"cannot set up a throttled loop device here: {error}")
    assert 0.8 < alone < 1.6
    assert together > 1.6 * alone
    assert subprocess.run(["findmnt", str(mount)], capture_output=True).returncode != 0
    assert device + ":" not in subprocess.run(["losetup", "-a"], capture_output=True, text=True).stdout
    assert not group.exists() and not (tmp_path / "ifs.img").exists()
