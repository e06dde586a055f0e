"""The job record's text parts and its validation, shared by the 3.x and 2.x readers."""

from __future__ import annotations

from mosaic.darshan.formats import Job
from mosaic.errors import LogError, Reason


def validate_job(job: Job) -> None:
    """SPEC 3.1 bad_job: end before start, no run time, or no processes."""
    if job.end < job.start:
        raise LogError(Reason.BAD_JOB, f"job ends ({job.end}) before it starts ({job.start})")
    if job.run_time <= 0:
        raise LogError(Reason.BAD_JOB, f"run time {job.run_time} <= 0")
    if job.nprocs < 1:
        raise LogError(Reason.BAD_JOB, f"nprocs {job.nprocs} < 1")


def _cstring(raw: bytes | bytearray) -> str:
    return raw.split(b"\0", 1)[0].decode("utf-8", "replace")


def parse_metadata(raw: bytes | bytearray) -> dict[str, str]:
    lines = (line.split("=", 1) for line in _cstring(raw).split("\n") if "=" in line)
    return {k: v for k, v in lines}


def parse_exe_and_mounts(raw: bytes | bytearray) -> tuple[str, list[tuple[str, str]]]:
    """Command line, then one ``\\n<fstype>\\t<mount point>`` line per mount."""
    exe, _, table = _cstring(raw).partition("\n")
    pairs = [line.split("\t", 1) for line in table.split("\n")]
    mounts = [(p[1], p[0]) for p in pairs if len(p) == 2]
    # Longest mount point first (darshan-util's order): the first prefix
    # match of a path is then its mount.
    mounts.sort(key=lambda m: len(m[0]), reverse=True)
    return exe, mounts
