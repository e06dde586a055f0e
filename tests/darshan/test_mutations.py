"""Seeded mutation test: any byte sequence gets a status, never a crash.

Over 10,000 inputs derived from real logs (and hand-built bzip2, raw,
big-endian, DXT v1 and v2 (DXT_POSIX, DXT_MPIIO) and 2.x ones):
truncations at region boundaries and at random, flipped bytes, zeroed
ranges, splices of two logs, and absurd header offsets, lengths, versions
and compression types. Each must give a Trace or a LogError with one of
SPEC 3.1's reasons; the reader's last-resort ``internal_error`` conversion
must never be needed.
"""

import struct
from pathlib import Path

import numpy as np
import pytest

from mosaic.config import Config
from mosaic.darshan import reader
from mosaic.errors import LogError
from mosaic.trace import build_trace
from mosaic_testing.handmade import dxt_record, legacy_log, posix_v4, record, v3_log
from mosaic_testing.logs import pydarshan_example_logs, real_logs

REASONS = {"unreadable", "truncated", "corrupt_stream", "unsupported_version", "bad_job", "no_io_modules"}
N_MUTANTS = 10_500
SEED_SIZE_LIMIT = 40_000  # keeps the run short; bigger logs add nothing new here
MAX_SEEDS_PER_DIR = 2


def handmade_seeds() -> list[bytes]:
    names = {1: "/scratch/a", 2: "/scratch/b"}
    mods = {
        "POSIX": (
            4,
            [
                posix_v4(1, 0, bytes_read=10, times={"read_start": 1, "read_end": 2}),
                posix_v4(2, -1, bytes_written=10),
            ],
        ),
        "STDIO": (2, [record("STDIO", 2, 2, 0, {6: 5}, {})]),
        "DXT_POSIX": (1, [dxt_record(1, 0, [(0, 5, 1.0, 1.5)], [(0, 5, 2.0, 2.5)])]),
    }
    be = {
        "POSIX": (4, [posix_v4(1, 0, bytes_read=10, e=">")]),
        "STDIO": (2, [record("STDIO", 2, 2, 0, {6: 5}, {}, ">")]),
        "DXT_POSIX": (1, [dxt_record(1, 0, [(0, 5, 1.0, 1.5)], [], ">")]),
    }
    # darshan's main branch: 40-byte segments with a pthread id (DXT_POSIX v2, DXT_MPIIO v3)
    threaded = {
        "POSIX": mods["POSIX"],
        "DXT_POSIX": (2, [dxt_record(1, 0, [(0, 5, 1.0, 1.5, 77)], [(0, 5, 2.0, 2.5, 77)])]),
        "DXT_MPIIO": (3, [dxt_record(2, 1, [(8, 5, 1.0, 1.25, 78)], [])]),
    }
    threaded_be = {
        "POSIX": be["POSIX"],
        "DXT_POSIX": (2, [dxt_record(1, 0, [(0, 5, 1.0, 1.5, 77)], [], ">")]),
        "DXT_MPIIO": (2, [dxt_record(2, 1, [], [(8, 5, 1.0, 1.25)], ">")]),
    }
    legacy = ((1, 0, "a", {47: 10, 138: 5}, {0: 1.0, 3: 2.0}),)
    return [
        v3_log("3.41", names=names, modules=threaded, streams=2),
        v3_log("3.41", e=">", comp=1, names=names, modules=threaded_be),
        v3_log("3.41", comp=1, names=names, modules=mods, streams=2),
        v3_log("3.21", comp=2, names=names, modules=mods),
        v3_log("3.41", e=">", names=names, modules=be),
        legacy_log(records=legacy),
        legacy_log(records=legacy, wrap="gz"),
        legacy_log(records=legacy, wrap="bz2"),
    ]


def real_seeds() -> list[bytes]:
    per_dir: dict[Path, int] = {}
    seeds = []
    for path in real_logs() + pydarshan_example_logs():
        if path.stat().st_size <= SEED_SIZE_LIMIT and per_dir.get(path.parent, 0) < MAX_SEEDS_PER_DIR:
            per_dir[path.parent] = per_dir.get(path.parent, 0) + 1
            seeds.append(path.read_bytes())
    return seeds


def boundaries(data: bytes) -> list[int]:
    """Region starts and ends of a 3.x log (header end, job end, names, modules)."""
    try:
        hdr = reader.Header(data)
    except LogError:
        return [8, 16, len(data) // 2]
    points = {hdr.size, hdr.job_region_end(len(data)), hdr.names[0], sum(hdr.names)}
    for off, n, _ in hdr.modules.values():
        points |= {off, off + n}
    return sorted(p for p in points if 0 < p < len(data))


def header_fields(data: bytes) -> list[tuple[int, str]]:
    """(offset, struct format) of every header number worth making absurd."""
    if data.startswith(b"3.41"):
        maps = [(48 + 8 * i, "<Q") for i in range(128)]
        return (
            [(16, "<B"), (24, "<Q"), (32, "<Q"), (40, "<Q")]
            + maps
            + [(1072 + 4 * i, "<I") for i in range(64)]
        )
    if data.startswith(b"3."):
        return (
            [(16, "<B"), (20, "<I"), (24, "<Q"), (32, "<Q")]
            + [(40 + 8 * i, "<Q") for i in range(32)]
            + [(296 + 4 * i, "<I") for i in range(16)]
        )
    return [(8 + 8 * i, "<q") for i in range(6)]


ABSURD = [0, 1, 2, 3, 7, 2**31 - 1, 2**32 - 1, 2**62, 2**63 - 1, 2**64 - 1, 1328, 360, 4096]


def mutate(rng: np.random.Generator, data: bytes, other: bytes) -> bytes:
    kind = rng.integers(8)
    n = len(data)
    if kind == 0:  # truncate at a region boundary, give or take a byte
        cut = int(rng.choice(boundaries(data))) + int(rng.integers(-2, 3))
        return data[: max(cut, 0)]
    if kind == 1:  # truncate anywhere
        return data[: int(rng.integers(n))]
    if kind in (2, 3):  # flip a few bytes, half the time inside the header
        out = bytearray(data)
        span = min(n, 1328) if kind == 2 else n
        for pos in rng.integers(0, span, int(rng.integers(1, 9))):
            out[pos] ^= int(rng.integers(1, 256))
        return bytes(out)
    if kind == 4:  # zero a range
        a = int(rng.integers(n))
        return data[:a] + b"\0" * int(rng.integers(1, 200)) + data[a + 200 :]
    if kind == 5:  # splice two logs
        return data[: int(rng.integers(n))] + other[int(rng.integers(len(other))) :]
    if kind == 6:  # absurd header numbers (either byte order)
        out = bytearray(data)
        for _ in range(int(rng.integers(1, 4))):
            fields = header_fields(data)
            off, fmt = fields[int(rng.integers(len(fields)))]
            size = struct.calcsize(fmt)
            if off + size <= n:
                value = int(rng.choice(ABSURD)) % (1 << (8 * size))
                if fmt == "<q" and value >= 2**63:
                    value -= 2**64
                struct.pack_into(("<" if rng.integers(2) else ">") + fmt[1:], out, off, value)
        return bytes(out)
    # version string swapped for another known or unknown one
    version = [b"3.00", b"3.10", b"3.21", b"3.41", b"2.06", b"3.99", b"9.9"][int(rng.integers(7))]
    return version.ljust(8, b"\0") + data[8:]


def check(data: bytes, config: Config) -> str:
    try:
        trace = build_trace(reader.read_log(data), "mutant", config)
    except LogError as err:
        assert err.reason in REASONS, err
        return err.reason
    ops = trace.ops
    assert np.isfinite(ops["start"]).all() and np.isfinite(ops["end"]).all()
    assert (ops["bytes"] > 0).all() and (ops["end"] >= ops["start"]).all()
    return "ok"


@pytest.mark.slow
def test_mutated_logs_always_get_a_status(shared_logs):  # seeds: mostly the real logs
    seeds = real_seeds() + handmade_seeds()
    assert len(seeds) >= 20
    rng = np.random.default_rng(20241122)
    config = Config()
    outcomes: dict[str, int] = {}
    for i in range(N_MUTANTS):
        data = seeds[i % len(seeds)]
        other = seeds[int(rng.integers(len(seeds)))]
        status = check(mutate(rng, data, other), config)
        outcomes[status] = outcomes.get(status, 0) + 1
    assert sum(outcomes.values()) == N_MUTANTS
    # The mutations reach every kind of defect, and many mutants stay readable.
    assert {"ok", "truncated", "corrupt_stream", "unreadable", "unsupported_version"} <= set(outcomes)
    assert outcomes["ok"] > N_MUTANTS // 20


def test_every_boundary_truncation_of_every_seed():
    config = Config()
    for data in real_seeds() + handmade_seeds():
        for cut in boundaries(data):
            for delta in (-1, 0, 1):
                status = check(data[: cut + delta], config)
                assert status != "ok" or cut + delta >= len(data), (cut, delta)
