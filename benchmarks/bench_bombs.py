"""What hostile inputs cost before they are refused or skipped: compression bombs and
archive members that are no logs.

    .venv/bin/python -m benchmarks.bench_bombs DIR [--zeros-mb MB] [--sparse-gib GIB]

Builds in DIR (kept: a rerun reuses the files) and times, in CPU and wall seconds:

* ``read_log`` of a body that is gzip of bzip2 of MB megabytes of zeros (100 bytes for
  1,000 MB): refused unreadable from its inner layer's first bytes;
* ``iter_archive`` of a .tar.gz whose first member is MB megabytes of zeros (no log),
  then a real log: the zeros are skipped at the decompressor's speed;
* ``iter_archive`` of a plain .tar whose first member is a GIB gibibyte hole (a sparse
  file), then a real log: the hole is seeked past, never read.
"""

from __future__ import annotations

import argparse
import bz2
import gzip
import resource
import time
from collections.abc import Callable
from pathlib import Path

from mosaic.darshan.archive import iter_archive
from mosaic.darshan.reader import read_log
from mosaic.errors import LogError
from mosaic.synth.hostile import sparse_member_tar, zero_member_tar

LOG = next((Path(__file__).resolve().parents[1] / "tests" / "data").rglob("*.darshan")).read_bytes()
MB = 1000 * 1000


def wrapped_zeros(path: Path, size: int) -> Path:
    if not path.exists():
        packer = bz2.BZ2Compressor(9)
        inner = b"".join(
            packer.compress(bytes(min(1 << 20, size - done))) for done in range(0, size, 1 << 20)
        )
        path.write_bytes(gzip.compress(inner + packer.flush(), mtime=0))
    return path


def zero_member_tgz(path: Path, size: int) -> Path:
    return path if path.exists() else zero_member_tar(path, size, "w:gz", "day/real.darshan", LOG)


def sparse_tar(path: Path, size: int) -> Path:
    return path if path.exists() else sparse_member_tar(path, size, "day/real.darshan", LOG)


def timed(label: str, call: Callable[[], str]) -> None:
    wall, cpu = time.monotonic(), time.process_time()
    outcome = call()
    wall, cpu = time.monotonic() - wall, time.process_time() - cpu
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(f"{label:<44} {cpu:8.3f} {wall:8.3f} {rss:7d}  {outcome}")


def refusal(body: bytes) -> str:
    try:
        read_log(body)
    except LogError as error:
        return str(error)
    return "read"


def members(path: Path) -> str:
    return ", ".join(f"{name}: {error[0] if error else 'ok'}" for name, _, error in iter_archive(path))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dir", type=Path)
    parser.add_argument(
        "--zeros-mb", type=int, default=1000, help="zeros in the bomb and in the .tar.gz member"
    )
    parser.add_argument("--sparse-gib", type=int, default=100, help="the hole member of the plain .tar")
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    zeros = args.zeros_mb * MB
    body = wrapped_zeros(args.dir / f"zeros-{args.zeros_mb}MB.gz.bz2", zeros).read_bytes()
    tgz = zero_member_tgz(args.dir / f"zero-member-{args.zeros_mb}MB.tar.gz", zeros)
    tar = sparse_tar(args.dir / f"sparse-{args.sparse_gib}GiB.tar", args.sparse_gib << 30)
    print(f"{'case':<44} {'CPU s':>8} {'wall s':>8} {'RSS MB':>7}  outcome")
    timed(f"gzip(bzip2({args.zeros_mb} MB zeros)), {len(body)} bytes", lambda: refusal(body))
    timed(f".tar.gz: {args.zeros_mb} MB zero member, a log", lambda: members(tgz))
    timed(f".tar: {args.sparse_gib} GiB sparse member, a log", lambda: members(tar))


if __name__ == "__main__":
    main()
