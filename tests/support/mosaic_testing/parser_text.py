"""What darshan's own tools printed for a log, parsed for the oracle tests.

``tests/data/darshan-logs-runtime/`` keeps, beside each log darshan-runtime
wrote, the output of ``darshan-parser`` (``NAME.parser.txt``: the job, the
mount table, every counter of every record) and of ``darshan-dxt-parser``
(``NAME.dxt.txt``: every DXT segment), from the same darshan build. Counter
values stay text: a test prints its own number the way the tool did
(``FLOAT``, ``DXT_TIME``, ``RUN_TIME``) and compares strings, so floats agree
at the printed precision, neither looser nor stricter.

Layouts (darshan-util's ``darshan-parser.c`` and ``darshan-dxt-parser.c``):
- header lines ``# key: value``, ``# metadata: key = value``,
  ``# mount entry:`` then tab-separated (3.x: mount point, fs type; 2.x:
  device, mount point, fs type);
- 3.x counter lines ``module, rank, record id, counter, value, file name,
  mount point, fs type`` (tab-separated); 2.x lines lack the module
  (``rank, file hash, CP_ counter, value, name suffix, mount, fs``) and
  every counter of a record (POSIX and MPI-IO alike) is one ``CP_`` record;
- DXT blocks ``# DXT, file_id: ID, file_name: NAME``, ``# DXT, rank: R,
  hostname: H``, ``# DXT, number of threads: N`` (with thread ids only),
  ``# DXT, write_count: W, read_count: R``, then one line per segment
  ``X_POSIX rank write|read index offset length start end [pthread id]``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from mosaic_testing.logs import TEST_DATA

RUNTIME_LOGS = TEST_DATA / "darshan-logs-runtime"
LEGACY_MODULE = "CP"  # the module of every 2.x counter line
FLOAT = "{:.6f}"  # counters' doubles (printf "%f")
DXT_TIME = "{:.4f}"  # DXT segment start and end (printf "%12.4f")
RUN_TIME = "{:.4f}"  # 3.x "# run time:" (printf "%.4lf"); 2.x prints whole seconds

# Canonical field (formats.CANONICAL_COUNTERS / CANONICAL_FCOUNTERS) -> darshan-util's
# counter names, without the module prefix. MPI-IO counts independent, collective,
# split and non-blocking calls apart (the canonical field is their sum) and has no seeks.
COUNTER_NAMES: dict[str, dict[str, tuple[str, ...]]] = {
    "POSIX": {
        "opens": ("OPENS",),
        "seeks": ("SEEKS",),
        "reads": ("READS",),
        "writes": ("WRITES",),
        "bytes_read": ("BYTES_READ",),
        "bytes_written": ("BYTES_WRITTEN",),
    },
    "MPIIO": {
        "opens": ("INDEP_OPENS", "COLL_OPENS"),
        "reads": ("INDEP_READS", "COLL_READS", "SPLIT_READS", "NB_READS"),
        "writes": ("INDEP_WRITES", "COLL_WRITES", "SPLIT_WRITES", "NB_WRITES"),
        "seeks": (),
        "bytes_read": ("BYTES_READ",),
        "bytes_written": ("BYTES_WRITTEN",),
    },
}
COUNTER_NAMES["STDIO"] = COUNTER_NAMES["POSIX"]
# POSIX_OPENS counts fileno() and dup() calls too; the canonical opens leave them out where
# the version counts them (formats.NOT_OPENING: POSIX v4).
NOT_OPENING_NAMES = {"POSIX": ("FILENOS", "DUPS")}


def expected_counter(module: str, field: str, named: Mapping[str, Any]) -> Any:
    """A canonical counter from darshan-util's counters of ``module`` ("POSIX", "MPIIO",
    "STDIO"), ``named`` by name without the module prefix (a number or a column each)."""
    total = sum((named[name] for name in COUNTER_NAMES[module][field]), 0)
    if field != "opens":
        return total
    for name in NOT_OPENING_NAMES.get(module, ()):
        if name in named:  # where the version counts them (pydarshan shows -1 where not)
            total = total - np.maximum(named[name], 0)
    return np.maximum(total, 0)


TIMESTAMP_NAMES = {
    "open_start": "F_OPEN_START_TIMESTAMP",
    "open_end": "F_OPEN_END_TIMESTAMP",
    "read_start": "F_READ_START_TIMESTAMP",
    "read_end": "F_READ_END_TIMESTAMP",
    "write_start": "F_WRITE_START_TIMESTAMP",
    "write_end": "F_WRITE_END_TIMESTAMP",
    "close_start": "F_CLOSE_START_TIMESTAMP",
    "close_end": "F_CLOSE_END_TIMESTAMP",
}
# Darshan 2.x stream calls (fopen, fseek, fread, fwrite) count toward the canonical
# opens, seeks, reads and writes beside the POSIX calls, as 3.x's STDIO module does.
LEGACY_STREAM_NAMES = {
    "opens": "POSIX_FOPENS",
    "seeks": "POSIX_FSEEKS",
    "reads": "POSIX_FREADS",
    "writes": "POSIX_FWRITES",
}
# Darshan 2.x counter names of the canonical fields (CP_ prefix; darshan-util 2.x).
LEGACY_NAMES = {
    "opens": "POSIX_OPENS",
    "seeks": "POSIX_SEEKS",
    "reads": "POSIX_READS",
    "writes": "POSIX_WRITES",
    "bytes_read": "BYTES_READ",
    "bytes_written": "BYTES_WRITTEN",
    "open": "F_OPEN_TIMESTAMP",
    "close": "F_CLOSE_TIMESTAMP",
    "read_start": "F_READ_START_TIMESTAMP",
    "read_end": "F_READ_END_TIMESTAMP",
    "write_start": "F_WRITE_START_TIMESTAMP",
    "write_end": "F_WRITE_END_TIMESTAMP",
}

RecordKey = tuple[str, int, int]  # (module as printed, rank, record id)


@dataclass
class ParserText:
    """One ``darshan-parser`` output."""

    # "uid", "jobid", "start_time", "end_time", "nprocs", "run time", "exe", "DXT_POSIX module", ...
    header: dict[str, str]
    metadata: dict[str, str]
    mounts: list[tuple[str, str]]  # (mount point, fs type), as printed
    records: dict[RecordKey, dict[str, str]]  # counter name -> value text, in printed order
    names: dict[int, str] = field(default_factory=dict)  # record id -> file name column
    mount_points: dict[int, str] = field(default_factory=dict)  # record id -> mount point column


class DxtSegmentText(NamedTuple):
    file_id: int
    rank: int
    is_write: bool
    index: int  # position among the record's writes (or reads)
    offset: int
    length: int
    start: str  # DXT_TIME text
    end: str
    thread: int | None  # pthread id (darshan's main branch), None in older output


@dataclass
class DxtRecordText:
    """One record block of ``darshan-dxt-parser``."""

    module: str  # "X_POSIX" or "X_MPIIO"
    file_id: int
    file_name: str
    rank: int
    threads: int | None  # "number of threads" (printed with thread ids only)
    write_count: int
    read_count: int
    segments: list[DxtSegmentText] = field(default_factory=list)


_HEADER_LINE = re.compile(r"# ([\w -]+): (.*)")


def read_parser_text(path: Path) -> ParserText:
    text = ParserText({}, {}, [], {})
    for line in path.read_text().splitlines():
        if line.startswith("# metadata: "):
            key, _, value = line.removeprefix("# metadata: ").partition(" = ")
            text.metadata[key] = value
        elif line.startswith("# mount entry:"):
            *_, mount, fs = [part.strip() for part in line.removeprefix("# mount entry:").split("\t")]
            text.mounts.append((mount, fs))
        elif line.startswith("#"):
            match = _HEADER_LINE.fullmatch(line)
            if match and match[1] not in text.header:
                text.header[match[1]] = match[2]
        elif line.strip():
            _counter_line(text, line.split("\t"))
    return text


def _counter_line(text: ParserText, parts: list[str]) -> None:
    if len(parts) == 7:  # 2.x: no module column
        parts = [LEGACY_MODULE, *parts]
    module, rank, rid, counter, value, name, mount = parts[:7]
    text.records.setdefault((module, int(rank), int(rid)), {})[counter] = value
    text.names.setdefault(int(rid), name)
    text.mount_points.setdefault(int(rid), mount)


def read_dxt_text(path: Path) -> list[DxtRecordText]:
    records: list[DxtRecordText] = []
    fields: dict[str, str] = {}
    for line in path.read_text().splitlines():
        words = line.split()
        if line.startswith("# DXT, file_id: "):
            file_id, _, name = line.removeprefix("# DXT, file_id: ").partition(", file_name: ")
            fields = {"file_id": file_id, "file_name": name}
        elif line.startswith("# DXT, "):
            fields.update(part.partition(": ")[::2] for part in line.removeprefix("# DXT, ").split(", "))
        elif line.startswith("# Module"):  # the column header ends a record's header
            records.append(_dxt_record(fields))
        elif words and words[0] in ("X_POSIX", "X_MPIIO"):
            module, rank, side, index, offset, length, start, end, *thread = words
            record = records[-1]
            record.module = module
            record.segments.append(
                DxtSegmentText(
                    record.file_id,
                    int(rank),
                    side == "write",
                    int(index),
                    int(offset),
                    int(length),
                    start,
                    end,
                    int(thread[0]) if thread else None,
                )
            )
    return records


def _dxt_record(fields: dict[str, str]) -> DxtRecordText:
    return DxtRecordText(
        module="",
        file_id=int(fields["file_id"]),
        file_name=fields["file_name"],
        rank=int(fields["rank"]),
        threads=int(fields["number of threads"]) if "number of threads" in fields else None,
        write_count=int(fields["write_count"]),
        read_count=int(fields["read_count"]),
    )
