"""`mosaic run`: scan -> validate -> deduplicate -> categorize -> write (SPEC 3.1-3.2, 3.8, 4).

Every stage streams through the SQLite store (``OUT/store.sqlite``): workers
return compact results per batch, the parent writes them to the store at
once and forgets them. Deduplication and the outputs are queries over the
store, sorted by file name, so the outputs do not depend on the number of
workers, the order batches finish in, or on how many times the run was
interrupted and resumed.

Parent memory, whatever the corpus size: the batches in flight
(``jobs_in_flight_per_cpu`` x node CPUs x ``batch_size`` log references, plus
the logs' bytes when shipped: archive members, ``--ship-logs``), one group's
runs during dedup, one archive's wanted member names, and with
``--all-runs`` one float per group. Per-log facts and results live in
SQLite (measured on the full 462,502-log year: 352 MB, ~760 bytes a log),
not in memory.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import fcntl
import functools
import itertools
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from mosaic import __version__
from mosaic.analysis import IMPORTED_ON_FIRST_USE
from mosaic.config import Config
from mosaic.corpus import dedup, timeline
from mosaic.corpus.engine import Failure, LazyEngine, Limits, Settings, Task, make_engine
from mosaic.corpus.node import read_secret
from mosaic.corpus.nodefault import NODE_FAULT, fault, node_bytes, settle
from mosaic.corpus.outputs import OutputSet
from mosaic.corpus.scan import LogRef, ScanCounts, Stamp, count_log_files, read_regular, scan
from mosaic.corpus.store import FunnelCounts, Row, Store
from mosaic.errors import EngineError, LogError, NodeFault, Reason

if TYPE_CHECKING:  # the reader is imported by the tasks, on workers
    from mosaic.darshan.formats import DarshanLog

OUTPUTS = ("traces.jsonl", "evicted.jsonl", "summary.json")
LOCK_FILE = ".mosaic-run.lock"
# What a worker imports once, ahead of any job: this module (the tasks), the
# analysis, and what the analysis imports only on first use (scipy.fft for a
# significant direction, scipy.spatial when mean shift clusters). scikit-learn is
# imported only when a config asks for its MeanShift (meanshift_implementation = "sklearn").
WORKER_PRELOAD = ("mosaic.corpus.pipeline", "mosaic.analysis.categorize", *IMPORTED_ON_FIRST_USE)
NO_STAMP = (None,) * len(Stamp._fields)  # an archive member read again to be categorized
RAMP_FACTOR = 64  # validation's first batch holds batch_size / RAMP_FACTOR logs (64 by default; see _batches)


# ----- per-log tasks (run on workers) -----


def evicted(ref: LogRef, reason: str, detail: str) -> dict[str, Any]:
    """Result of a log given up on (same keys as a task's eviction)."""
    return {
        "file": ref.name,
        "location": ref.location,
        "archive": ref.archive,
        **stamp_columns(ref),
        "status": "evicted",
        "reason": reason,
        "detail": detail,
    }


def stamp_columns(ref: LogRef) -> dict[str, int | None]:
    """The store columns of a log's :class:`Stamp` (Nones if it has none)."""
    return dict(zip(Stamp._fields, ref.stamp or NO_STAMP))


def _read(ref: LogRef, config: Config) -> DarshanLog:
    """The DarshanLog of a scanned log: from its bytes in hand, else from its file as this
    worker sees it (NodeFault when it does not: mosaic/corpus/nodefault.py)."""
    from mosaic.trace import read_bounded

    if ref.error:
        raise LogError(*ref.error)
    data = ref.data if ref.data is not None else node_bytes(ref, config.max_log_bytes)
    return read_bounded(data, config, ref.name)


def _guarded(ref: LogRef, work: Callable[[], Mapping[str, Any]]) -> dict[str, Any]:
    """`work()`, or the log's eviction with the engine's keys (one bad log never stops a batch),
    or the node fault of a log this worker could not see.

    A MemoryError is the worker's memory bound (mosaic.limits.limit_memory): ``too_large``.
    """
    from mosaic.logfile import guarded

    try:
        result = guarded(ref.name, work)
    except NodeFault as error:
        return fault(ref, error)
    return (
        evicted(ref, result["reason"], result["detail"])
        if result["status"] == "evicted"
        else cast(dict[str, Any], result)
    )


def validate_log(ref: LogRef, config: Config) -> dict[str, Any]:
    """The compact facts of one log that deduplication and the funnel need.

    With ``--all-runs`` every valid run gets categorized anyway, so it is
    categorized here, from the same read (key ``result``): a second stage
    would read and parse every log twice.
    """
    from mosaic.activity import build_activity
    from mosaic.analysis.categorize import categorize_trace
    from mosaic.corpus import perfstore
    from mosaic.corpus.profiles import run_identity
    from mosaic.corpus.timeline import activity_row
    from mosaic.trace import LogFacts, build_trace, log_facts
    from mosaic.trace import _clean as clean_records

    def work() -> dict[str, Any]:
        result = None
        log = _read(ref, config)
        if config.all_runs:
            # The log is dropped once its trace is built, as in categorize_log and the
            # service: kept through the analysis, its DXT segments would raise the peak by
            # ~1.8 times the DXT region, and a log under the DXT cap would be too_large
            # here but not there. Under --strict a partial log raises PARTIAL. The activity is
            # packed first, so that its arrays (a DXT log's every segment) are gone too.
            activity = activity_row(0, build_activity(log, config))
            trace = build_trace(log, ref.name, config)
            del log
            facts = LogFacts(
                trace.job, trace.total_bytes, trace.partial, trace.dropped_records, trace.performance
            )
            result = as_row(_guarded(ref, lambda: categorize_trace(trace, config)))
        else:
            clean = clean_records(log, config)  # once, for the facts and SPEC 3.10's activity
            facts = log_facts(log, config, clean)
            activity = activity_row(0, build_activity(log, config, clean))
        job = facts.job
        identity, key = run_identity(job), facts.group_key(config.group_by)
        return {
            "file": ref.name,
            "location": ref.location,
            "archive": ref.archive,
            **stamp_columns(ref),
            "status": "ok",
            "group_key": key,
            "uid": int(job["uid"]),
            "job_id": str(job["job_id"]),
            "application": job["application"],
            "start": job.get("start"),
            "total_bytes": facts.total_bytes,
            "run_time": job["run_time"],
            "partial": bool(facts.partial),
            "dropped_records": facts.dropped_records,
            "run": identity,
            "result": result,
            # SPEC 3.9: every valid log's performance, as its run_performance row, built here in
            # the worker (a JSON string crosses to the parent at a tenth of the nested dict's cost)
            "performance_row": perfstore.row(identity, key, job, facts.performance)
            if facts.performance is not None
            else None,
            "activity": (identity, *activity[1:]),  # SPEC 3.10, and 3.12's series from it
        }

    return _guarded(ref, work)


def categorize_log(ref: LogRef, config: Config) -> dict[str, Any]:
    """The SPEC 4 object of one log (its group is filled in by the parent)."""
    from mosaic.analysis.categorize import categorize_trace
    from mosaic.trace import build_trace

    result = _guarded(
        ref, lambda: categorize_trace(build_trace(_read(ref, config), ref.name, config), config)
    )
    return result if result["status"] == NODE_FAULT else as_row(result)


def as_row(result: dict[str, Any]) -> dict[str, Any]:
    """A result reduced to what the parent needs: its status, and its store row built here
    in the worker (serializing hundreds of thousands of results would load the parent)."""
    from mosaic.corpus.store import result_row

    return {
        "file": result["file"],
        "status": result["status"],
        "reason": result.get("reason"),
        "detail": result.get("detail"),
        "row": result_row(result),
    }


def save_validated(store: Store, batch: list[dict[str, Any]]) -> None:
    """Store a batch of validation facts, and the categorizations made with them."""
    store.save_facts(batch)
    store.save_results([fact["result"] for fact in batch if fact.get("result")])
    timeline.save_validated_activity(store, batch)


def compute_signatures(store: Store, config: Config) -> None:
    from mosaic.signature import compute_all

    compute_all(store, config)


GIVEN_UP = {
    Failure.CRASH: Reason.WORKER_CRASH,
    Failure.TIMEOUT: Reason.TIMEOUT,
    Failure.MEMORY: Reason.TOO_LARGE,
}


def given_up(ref: LogRef, failure: Failure, detail: str) -> dict[str, Any]:
    """Result of a log the engine gave up on: its eviction for the matching reason."""
    return evicted(ref, GIVEN_UP[failure], detail)


VALIDATE = Task(validate_log, given_up)
CATEGORIZE = Task(categorize_log, given_up)


def engine_settings(config: Config, nodes: list[str] | None) -> Settings:
    """The engine's settings; with `nodes`, their secret, read from ``node_secret_file``."""
    return Settings(
        limits=Limits(config.trace_timeout_seconds, config.worker_memory_bytes),
        pulse_seconds=config.node_pulse_seconds,
        ping_seconds=config.node_ping_seconds,
        start_timeout_seconds=config.node_start_timeout_seconds,
        lost_timeout_seconds=config.node_lost_timeout_seconds,
        jobs_per_cpu=config.jobs_in_flight_per_cpu,
        port=config.dispy_port,
        secret=read_secret(config.node_secret_file) if nodes else None,
        client_address=config.client_address,
    )


# ----- orchestration (parent) -----


def run(
    inputs: Iterable[str | os.PathLike[str]],
    out: str | Path,
    config: Config,
    workers: int = 1,
    nodes: list[str] | None = None,
    ship_bytes: bool = False,
    quiet: bool = True,
) -> dict[str, Any]:
    """Run the whole pipeline; write OUT/traces.jsonl, evicted.jsonl, summary.json.

    Rerunning the same command resumes: logs already validated or
    categorized under the same results hash are not processed again. The
    three outputs replace the previous ones together, once all are complete
    (:class:`OutputSet`): a run that fails leaves the previous ones as they were.
    """
    inputs = [os.fspath(path) for path in inputs]
    settings = engine_settings(config, nodes)  # a refused secret file stops the run before any work
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    timings: dict[str, float] = {}
    clock = time.perf_counter()
    counts = ScanCounts()
    with _locked(out), OutputSet(out, OUTPUTS) as outputs:
        with (
            Store(out / "store.sqlite") as store,
            make_engine(settings, config, workers, nodes, WORKER_PRELOAD) as engine,
        ):
            store.check()
            # Results of another configuration or another version are not resumed: the
            # labels of one version may differ from the next (docs/release.md).
            store.begin_run(f"{config.hash()} mosaic {__version__}")
            store_versions = store.versions(adding=__version__)
            if len(store_versions) > 1:
                sys.stderr.write(_mixed_versions(out / "store.sqlite", store_versions))
            timings["start"] = _lap(clock)
            total = count_log_files(inputs) if _show_progress(quiet) else None
            refs = scan(inputs, counts, ship_bytes, config.max_log_bytes, store.reuse_archive)
            _stream(
                _settled(
                    engine.map(
                        VALIDATE, _new_batches(refs, store, config.batch_size, config.batch_bytes, counts)
                    ),
                    config.max_log_bytes,
                ),
                functools.partial(save_validated, store),
                "validate",
                total,
                quiet,
                counts,
            )
            store.save_archives(counts.archives_read)
            timings["scan_validate"] = _lap(clock, timings)
            store.save_groups(dedup.groups(store.runs_by_group()))
            timings["dedup"] = _lap(clock, timings)
            categorized = _categorize(store, engine, config, ship_bytes, quiet)
            while store.promote_stand_ins() and (
                more := _categorize(store, engine, config, ship_bytes, quiet)
            ):
                categorized += more  # stand-ins for representatives evicted during categorization
            timings["categorize"] = _lap(clock, timings)
            # SPEC 3.10: every stored run's concurrent load, and the center's timeline on the way
            _, timelines = timeline.loads_and_timeline(
                store, config.timeline_bin_seconds, kept=config.load_overlaps_kept
            )
            timings["load"] = _lap(clock, timings)
            for node in engine.absent():
                sys.stderr.write(f"warning: node {node}; this run went on without it\n")
            with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
                # The lookup tables fill inside SQLite (C, the GIL released) while this
                # thread writes the outputs from the store's reader connection.
                publishing = pool.submit(store.publish)
                summary = write_outputs(store, outputs, config, counts, timings, timelines)
                summary["store_versions"] = store_versions
                publishing.result()
            timings["write"] = _lap(clock, timings)
            # Who slows whom (SPEC 3.11) over the published runs' performance and load
            from mosaic.interference.analyse import analyse_safely

            summary["contention"] = analyse_safely(store, config)
            timings["contention"] = _lap(clock, timings)
            compute_signatures(store, config)  # SPEC 3.12: every group's signature from its series
            timings["signatures"] = _lap(clock, timings)
        timings["engine_started"] = engine.started
        timings["validated_before"] = counts.validated_before  # logs this run did not validate again
        # The rates count the work this run did: a resumed run skips what an earlier one did.
        timings["validated_now"] = counts.logs - counts.validated_before
        timings["categorized_now"] = categorized
        timings["total"] = time.perf_counter() - clock
        timings["logs_per_second"] = timings["validated_now"] / max(timings["total"], 1e-9)
        timings["validate_logs_per_second"] = timings["validated_now"] / max(timings["scan_validate"], 1e-9)
        outputs.open("summary.json").write(json.dumps(summary, indent=1) + "\n")
        outputs.commit()  # all three replace the previous ones only now
    return summary


@contextlib.contextmanager
def _locked(out: Path) -> Iterator[None]:
    """Hold OUT's lock file for the run: a second run on the same folder is refused
    (two writers would each publish a part of the corpus). The kernel drops the
    lock when the process ends, however it ends."""
    with open(out / LOCK_FILE, "a+") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.seek(0)
            holder = lock.read().strip() or "another process"
            raise EngineError(
                f"{out} is in use by another mosaic run ({holder}); "
                "wait for it to end or choose another --out"
            ) from None
        lock.truncate(0)
        lock.write(f"pid {os.getpid()}\n")
        lock.flush()
        yield


def _categorize(store: Store, engine: LazyEngine, config: Config, ship_bytes: bool, quiet: bool) -> int:
    """Categorize the logs still to do (representatives, or every valid run); how many."""
    total = sum(1 for _ in store.to_categorize(config.all_runs))
    if total:
        size = balanced_batch_size(
            total, engine.cpus() * config.jobs_in_flight_per_cpu, config.categorize_batch_size
        )
        targets = _batches(
            _categorize_refs(store, config.all_runs, ship_bytes, config.max_log_bytes),
            size,
            config.batch_bytes,
        )
        results = _settled(engine.map(CATEGORIZE, targets), config.max_log_bytes)
        _stream(results, store.save_results, "categorize", total, quiet)
    return total


def _settled(results: Iterable[list[dict[str, Any]]], max_bytes: int) -> Iterator[list[dict[str, Any]]]:
    """The batches of `results` with each node fault settled (mosaic/corpus/nodefault.py): the
    eviction of a log this machine cannot read either; for one it reads, the batch's other
    results, then the EngineError that stops the run."""
    for batch in results:
        kept, stop = [], None
        for result in batch:
            if result["status"] != NODE_FAULT:
                kept.append(result)
            elif isinstance(settled := settle(result, max_bytes), EngineError):
                stop = stop or settled
            else:
                kept.append(evicted(result["ref"], *settled))
        yield kept
        if stop is not None:
            raise stop


def _lap(clock: float, timings: dict[str, float] | None = None) -> float:
    """Seconds since `clock` not yet attributed to an earlier stage."""
    return time.perf_counter() - clock - float(sum((timings or {}).values()))


def _batches(
    refs: Iterable[LogRef], size: int, max_bytes: int, first: int | None = None
) -> Iterator[list[LogRef]]:
    """Batches of at most `size` logs that stop once they hold `max_bytes` of logs: a
    batch of a thousand heavy logs would keep one core busy while the other has nothing to do.

    With `first`, sizes start there and double up to `size`: every core gets
    work at once and a small corpus still spreads, while a large one goes out
    in large batches (each dispy job and worker fork costs ~30-40 ms of CPU).
    """
    batch, held, limit = [], 0, min(first or size, size)
    for ref in refs:
        batch.append(ref)
        held += log_bytes(ref)
        if len(batch) >= limit or held >= max_bytes:
            yield batch
            batch, held, limit = [], 0, min(2 * limit, size)
    if batch:
        yield batch


def log_bytes(ref: LogRef) -> int:
    """A log's size as stored: its bytes in hand, else its file's size (0 if unknown)."""
    if ref.data is not None:
        return len(ref.data)
    return ref.stamp.size if ref.stamp and ref.archive is None else 0


def balanced_batch_size(total: int, slots: int, cap: int) -> int:
    """At most `cap`, but small enough that `total` logs fill all `slots` (job places):
    a few hundred representatives must not end up in one job on one core."""
    return max(1, min(cap, -(-total // max(slots, 1))))


def _new_batches(
    refs: Iterable[LogRef], store: Store, size: int, max_bytes: int, counts: ScanCounts
) -> Iterator[list[LogRef]]:
    """Batches of scanned logs not yet validated, from these very files, under this
    results hash (the others are counted in `counts.validated_before`)."""
    for batch in _batches(refs, size, max_bytes, first=max(1, size // RAMP_FACTOR)):
        done = store.mark_seen([(ref.name, ref.location, *(ref.stamp or NO_STAMP)) for ref in batch])
        fresh = [ref for ref in batch if ref.name not in done]
        counts.validated_before += len(batch) - len(fresh)
        if fresh:
            yield fresh


def _categorize_refs(store: Store, all_runs: bool, ship_bytes: bool, max_bytes: int) -> Iterator[LogRef]:
    """Logs to categorize; members of one archive are read in one pass over it."""
    from mosaic.darshan.archive import iter_archive

    rows = store.to_categorize(all_runs)
    for archive, members in itertools.groupby(rows, key=lambda row: row["archive"]):
        if archive is None:
            for row in members:
                data, error = read_regular(row["location"], max_bytes) if ship_bytes else (None, None)
                yield LogRef(
                    row["file"],
                    row["location"],
                    data,
                    error=error,
                    stamp=Stamp(row["size"], row["mtime_ns"], row["ctime_ns"]),
                )
            continue
        wanted = {row["location"][len(archive) + 1 :]: row["file"] for row in members}
        try:
            for member, content, problem in iter_archive(archive, max_bytes):
                if member in wanted:
                    name = wanted.pop(member)
                    yield LogRef(name, f"{archive}/{member}", content, problem, archive=archive)
        except LogError as error:
            detail = error.detail
        else:
            detail = "member no longer in the archive"
        for member, name in wanted.items():
            yield LogRef(name, f"{archive}/{member}", archive=archive, error=(Reason.UNREADABLE, detail))


def _show_progress(quiet: bool) -> bool:
    return not quiet and sys.stderr.isatty()


def _stream(
    results: Iterator[list[dict[str, Any]]],
    save: Callable[[list[dict[str, Any]]], None],
    stage: str,
    total: int | None,
    quiet: bool,
    counts: ScanCounts | None = None,
) -> None:
    """Save each batch of results as it arrives; show progress on a terminal.

    With the scan's `counts`, the total grows by the archive members met so far
    (`total` counts plain log files only: counting members means reading archives),
    and the logs an earlier run validated count as done (a resumed run ends at 100 %).
    """
    from tqdm import tqdm

    evictions, handled = 0, 0
    with tqdm(
        total=total, desc=stage, unit="log", disable=not _show_progress(quiet), dynamic_ncols=True
    ) as bar:

        def advance() -> None:
            if counts is not None and total is not None:
                bar.total = total + counts.members
            bar.update(handled + (counts.validated_before if counts else 0) - bar.n)

        for batch in results:
            save(batch)
            evictions += sum(result["status"] != "ok" for result in batch)
            handled += len(batch)
            advance()
            bar.set_postfix(evicted=evictions, refresh=False)
        advance()


class Funnel(FunnelCounts):
    """summary.json's ``funnel``: what became of every file seen (SPEC 6)."""

    files_seen: int
    non_log_files: int  # files seen that are neither a log nor an archive (named "skipped_files" before)
    paths_not_read: dict[str, int]  # by reason: FIFOs, vanished, unreadable, repeated folders ("skipped")
    logs: int
    evicted: dict[str, int]  # logs evicted at validation, by reason
    evicted_total: int
    categorize_evicted: dict[str, int]  # representatives evicted while categorized, by reason
    internal_errors: int  # logs that met a defect of mosaic (reason internal_error), at either stage


def write_outputs(
    store: Store,
    outputs: OutputSet,
    config: Config,
    counts: ScanCounts,
    timings: dict[str, float],
    timelines: dict[str, timeline.Timeline] | None = None,
) -> dict[str, Any]:
    """Write traces.jsonl and evicted.jsonl (sorted by file) into `outputs`; return the summary.

    `timings` is placed in the summary as is, so the caller can complete it.
    """
    from mosaic.corpus.stats import CorpusStats, stability_summary

    shares = stability_shares(store.categories_by_group()) if config.all_runs else None
    group_json = functools.cache(_group_json)  # a group's runs share it (~12 with --all-runs)
    # Which code and which settings made every line (docs/release.md), as in summary.json.
    made = {"mosaic_version": __version__, "config_hash": config.hash()}
    made_by = json.dumps(made)[1:-1]
    label_sets: dict[tuple[str, bool], list[int]] = {}  # (categories, representative) -> [traces, weight]
    loads = timeline.loads_by_file(store)  # SPEC 3.10: each run's concurrent load
    fh = outputs.open("traces.jsonl")  # left open: OutputSet.commit syncs and closes it
    for row in store.categorized(config.all_runs):
        representative = bool(row["representative"])
        share = shares.get(row["group_key"]) if shares is not None else _NO_SHARE
        # The stored JSON object without its closing brace, then the group: no parse.
        fh.write(
            f'{row["result"][:-1]}, "group": '
            f"{group_json(row['group_key'], row['runs'], representative, share)}, "
            f'"load": {json.dumps(loads.get(row["file"], []))}, {made_by}}}\n'
        )
        tally = label_sets.setdefault((row["categories"], representative), [0, 0])
        tally[0] += 1
        tally[1] += 1 if config.all_runs else row["runs"]
    stats = CorpusStats()  # whole weights: summing them per label set first is exact
    for (categories, representative), (traces, weight_all) in label_sets.items():
        stats.add(json.loads(categories), float(traces if representative else 0), float(weight_all))
    evicted_at: dict[str, Counter[str]] = {"validate": Counter(), "categorize": Counter()}
    fh = outputs.open("evicted.jsonl")
    for row in store.evicted():
        fh.write(
            json.dumps({"file": row["file"], "reason": row["reason"], "detail": row["detail"], **made}) + "\n"
        )
        evicted_at["categorize" if row["stage"] == "categorize" else "validate"][row["reason"]] += 1
    stored = store.funnel_counts(config.all_runs)
    funnel: Funnel = {
        "files_seen": counts.files_seen,
        "non_log_files": counts.skipped_files,
        "paths_not_read": dict(sorted(counts.skipped.items())),
        "logs": counts.logs,
        "evicted": dict(sorted(evicted_at["validate"].items())),
        "evicted_total": sum(evicted_at["validate"].values()),
        "valid": stored["valid"],
        "partial": stored["partial"],
        "groups": stored["groups"],
        "categorized": stored["categorized"],
        "stand_ins": stored["stand_ins"],
        "categorize_evicted": dict(sorted(evicted_at["categorize"].items())),
        "internal_errors": sum(at.get(Reason.INTERNAL_ERROR, 0) for at in evicted_at.values()),
    }
    return {
        "funnel": funnel,
        **stats.to_dict(),
        "stability": stability_summary(shares.values()) if shares is not None else None,
        "timeline": timeline.summary(store, config.timeline_bin_seconds, timelines),
        "timings": timings,
        "config": config.to_dict(),
        "config_hash": config.hash(),
        "mosaic_version": __version__,
    }


def _mixed_versions(store: Path, versions: list[str]) -> str:
    """The warning of a run publishing into a store that holds results of other versions."""
    return (
        f"warning: {store} now holds results of mosaic {', '.join(versions)}: the lookups of "
        f"applications not seen by this run keep labels of an older version (start a new store "
        f"with another --out to keep one version)\n"
    )


_NO_SHARE = object()  # single run: a group has no "same_as_representative"


def _group_json(key: str, runs: int, representative: bool, share: object) -> str:
    """A trace's ``group`` object as JSON."""
    group: dict[str, object] = {"key": key, "runs": runs, "representative": representative}
    if share is not _NO_SHARE:
        group["same_as_representative"] = share
    return json.dumps(group)


def stability_shares(rows: Iterable[Row]) -> dict[str, float]:
    """Per group: share of its categorized runs whose categories equal the representative's.

    `rows` (group_key, representative, categories as JSON) come clustered by
    group; a group whose representative was not categorized has no share.
    """
    label_set = functools.cache(lambda categories: frozenset(json.loads(categories)))
    shares = {}
    for key, group in itertools.groupby(rows, key=lambda r: r["group_key"]):
        members = [(r["representative"], label_set(r["categories"])) for r in group]
        reference = [labels for representative, labels in members if representative]
        if reference:
            same = sum(labels == reference[0] for _, labels in members)
            shares[key] = same / len(members)
    return shares


def one_screen(summary: dict[str, Any], out: str | Path, top: int = 12) -> str:
    """The end-of-run summary for a terminal: funnel, most frequent categories, speed."""
    funnel, timings = summary["funnel"], summary["timings"]
    single = summary["distributions"]["single_run"]
    lines = [
        f"files seen {funnel['files_seen']}  (not logs {funnel['non_log_files']})   "
        f"logs {funnel['logs']}   evicted {funnel['evicted_total']}   valid {funnel['valid']}"
        f"  (partial {funnel['partial']})",
        f"groups {funnel['groups']}   categorized {funnel['categorized']}",
    ]
    reasons = {
        **funnel["evicted"],
        **{f"{k} (categorize)": v for k, v in funnel["categorize_evicted"].items()},
    }
    if reasons:
        lines.append("evicted: " + ", ".join(f"{k} {v}" for k, v in reasons.items()))
    if defects := funnel["internal_errors"]:
        lines.append(
            f"{defects} log{'s' if defects != 1 else ''} met a defect of mosaic, not bad data "
            "(reason internal_error in evicted.jsonl, with where it was raised): please report it"
        )
    traces = single["traces"] or 1
    ranked = sorted(single["counts"].items(), key=lambda kv: -kv[1])[:top]
    lines.append(
        "categories (single run): "
        + ", ".join(f"{label} {count / traces:.0%}" for label, count in ranked if count)
    )
    if summary["stability"]:
        lines.append(f"runs like their representative: mean {summary['stability']['mean']:.0%}")
    speed = f"{timings['logs_per_second']:.0f} logs/s"
    if timings.get("validated_before"):  # a resumed run: its rate is of the logs it read
        speed = (
            f"resumed: {timings['validated_now']:,.0f} new logs ({speed}), {timings['categorized_now']:,.0f} "
            f"categorized, {timings['validated_before']:,.0f} done by an earlier run"
        )
    lines.append(f"{timings['total']:.1f} s, {speed}  ->  {out}")
    return "\n".join(lines) + "\n"
