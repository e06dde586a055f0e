"""A file system whose bandwidth jobs truly share, for making interference logs where
darshan-runtime and IOR are at hand (tests/data/darshan-logs-interference was made so):
a sparse image on a loop device, ext4, mounted, and a blkio throttle on the device
(cgroup v2 ``io.max``, or v1 ``blkio.throttle.*``) that every job's shell joins. Everything
is undone on the way out, in reverse order, even when the body or a step fails."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

CGROUP = Path("/sys/fs/cgroup")


@dataclass(frozen=True)
class Throttled:
    mount: Path
    device: str
    procs: Path  # the cgroup's cgroup.procs: a job's shell writes its pid there first


def missing_tools() -> list[str]:
    """What this machine lacks to make the logs (empty: it can)."""
    needed = ["losetup", "mkfs.ext4", "mount", "umount", "mpirun", os.environ.get("MOSAIC_IOR", "ior")]
    lacking = [tool for tool in needed if shutil.which(tool) is None]
    if not Path(os.environ.get("MOSAIC_DARSHAN_LIB", "/usr/local/lib/libdarshan.so")).is_file():
        lacking.append("libdarshan.so (MOSAIC_DARSHAN_LIB)")
    if os.geteuid() != 0:
        lacking.append("root (loop devices, mounts, cgroups)")
    return lacking


def _run(*command: str) -> str:
    return subprocess.run(command, check=True, capture_output=True, text=True, timeout=60).stdout.strip()


@contextlib.contextmanager
def throttled_fs(folder: Path, bytes_per_second: int, size_bytes: int = 3 << 30) -> Iterator[Throttled]:
    """The throttled file system under ``folder``; removed whatever happens inside."""
    with contextlib.ExitStack() as undo:
        image = folder / "ifs.img"
        with open(image, "wb") as handle:
            handle.truncate(size_bytes)  # sparse
        undo.callback(image.unlink, missing_ok=True)
        device = _run("losetup", "--find", "--show", str(image))
        undo.callback(subprocess.run, ["losetup", "-d", device], check=False, timeout=60)
        _run("mkfs.ext4", "-q", "-F", device)
        mount = folder / "mnt"
        mount.mkdir()
        _run("mount", device, str(mount))
        undo.callback(subprocess.run, ["umount", "-l", str(mount)], check=False, timeout=60)
        rdev = os.stat(device).st_rdev
        numbers = f"{os.major(rdev)}:{os.minor(rdev)}"
        name = f"mosaic-ifs-{os.getpid()}"
        if (CGROUP / "cgroup.controllers").is_file():  # v2
            group = CGROUP / name
            with contextlib.suppress(OSError):  # already on, or not delegable: io.max says
                (CGROUP / "cgroup.subtree_control").write_text("+io")
            group.mkdir()
            undo.callback(_remove_group, group, CGROUP / "cgroup.procs")
            (group / "io.max").write_text(f"{numbers} rbps={bytes_per_second} wbps={bytes_per_second}")
        else:  # v1
            group = CGROUP / "blkio" / name
            group.mkdir()
            undo.callback(_remove_group, group, CGROUP / "blkio" / "cgroup.procs")
            for which in ("read", "write"):
                (group / f"blkio.throttle.{which}_bps_device").write_text(f"{numbers} {bytes_per_second}")
        yield Throttled(mount, device, group / "cgroup.procs")


def _remove_group(group: Path, parent_procs: Path) -> None:
    """Move any process left in ``group`` to its parent, then remove it."""
    with contextlib.suppress(OSError):
        for pid in (group / "cgroup.procs").read_text().split():
            with contextlib.suppress(OSError):
                parent_procs.write_text(pid)
    with contextlib.suppress(OSError):
        group.rmdir()


def ior_job(fs: Throttled, app: Path, options: list[str], job_id: int, log: Path) -> subprocess.Popen[bytes]:
    """One `mpirun -np 2` of IOR (a copy of its binary at ``app``: its own application) with
    darshan-runtime preloaded, inside the throttle, writing its Darshan log to ``log``."""
    library = os.environ.get("MOSAIC_DARSHAN_LIB", "/usr/local/lib/libdarshan.so")
    script = (
        f'echo $$ > "{fs.procs}" && exec mpirun --allow-run-as-root --oversubscribe -np 2 '
        f'-x LD_PRELOAD="{library}" -x SLURM_JOB_ID={job_id} -x DARSHAN_LOGFILE="{log}" '
        f'"{app}" {" ".join(options)} -o "{fs.mount}/job{job_id}"'
    )
    return subprocess.Popen(["sh", "-c", script], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
