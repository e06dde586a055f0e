"""Every threshold of the method (docs/method.md) in one place, validated when built.

All defaults live here and nowhere else. Fields are grouped in five sections:

* ``method``: what is computed (SPEC 2-3.8); only these enter :meth:`Config.hash`,
  the tag that invalidates stored results when a threshold changes;
* ``execution``: how the batch is spread and bounded (SPEC 5);
* ``service``: the scheduler API (``mosaic serve``);
* ``truth``: the ground-truth generators (``mosaic synth``);
* ``display``: how figures and pages show what was computed (``mosaic figures``,
  ``mosaic explain``, ``mosaic report``), outside the hash.

A TOML file passed with ``--config`` overrides any subset: flat keys, or keys
inside a table named after their section (``[method]``, ``[execution]``, ...).
An unknown key, a key under the wrong table, a value of the wrong type, a
choice not offered or a value out of range stops at construction with the
key, the value and what is allowed; so do two keys out of order
(:data:`ORDERINGS`), naming both.

An analysis step takes the fields it reads, never a default of its own:
keyword arguments named like them, or past three a :class:`Settings` built
from a Config.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import hashlib
import json
import math
import tomllib
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Self

SECTIONS = ("method", "execution", "service", "truth", "display")
# Fields whose values must keep an order, checked after each field's own range:
# (lower key, upper key, whether they may be equal, why).
ORDERINGS: tuple[tuple[str, str, bool, str], ...] = (
    ("low_busy_max", "high_busy_min", False, "a busy fraction is never both low and high"),
    ("period_second_max", "period_minute_max", False, "each period magnitude keeps a range"),
    ("period_minute_max", "period_hour_max", False, "each period magnitude keeps a range"),
    ("fft_min_samples", "fft_max_samples", True, "the FFT's sample count lies between them"),
    ("service_max_queued_per_client", "service_max_queued", True, "a client's share is part of the queue"),
    ("forecast_medium_slowdown", "forecast_high_slowdown", False, "each risk class keeps a range"),
    ("signature_min_runs", "signature_max_runs", True, "a signature is built from the runs it needs"),
    ("signature_gamma", "signature_kappa", True, "a common burst's neighbourhood holds its dense unit"),
)


def _field(
    section: str,
    default: Any,
    *,
    lo: float | None = None,
    hi: float | None = None,
    lo_open: bool = False,
    hi_open: bool = False,
) -> Any:
    """A dataclass field tagged with its section and its allowed range (typed ``Any``,
    as ``dataclasses.field`` is to the class body, whose annotation gives the type).

    Defaults are immutable (a list of values is a tuple, as :meth:`Config.replace`
    makes TOML lists): dataclasses refuses a list default, which every instance
    would share.
    """
    metadata = {"section": section, "lo": lo, "hi": hi, "lo_open": lo_open, "hi_open": hi_open}
    return dataclasses.field(default=default, metadata=metadata)


def method(default: Any, **bounds: Any) -> Any:
    return _field("method", default, **bounds)


def execution(default: Any, **bounds: Any) -> Any:
    return _field("execution", default, **bounds)


def service(default: Any, **bounds: Any) -> Any:
    return _field("service", default, **bounds)


def truth(default: Any, **bounds: Any) -> Any:
    return _field("truth", default, **bounds)


def display(default: Any, **bounds: Any) -> Any:
    return _field("display", default, **bounds)


POSITIVE = {"lo": 0.0, "lo_open": True}
NON_NEGATIVE = {"lo": 0.0}
SHARE = {"lo": 0.0, "hi": 1.0}

VerdictRule = Literal[
    "meanshift",
    "fft",
    "both",
    "meanshift_or_fft",
    "meanshift_or_confident_fft",
    "meanshift_or_scored_fft",
    "meanshift_or_significant_fft",
    "meanshift_or_strong_fft",
    "vetted_meanshift_or_significant_fft",
]


@dataclass(frozen=True)
class Config:
    # ===== method: what is computed (SPEC 2-3.8) =====
    # --- input filtering (SPEC 2) ---
    mounts: tuple[str, ...] = method(())  # keep only files under these prefixes; () = all
    excluded_prefixes: tuple[str, ...] = method(("/proc", "/sys", "/dev"))
    strict: bool = method(False)  # evict partial logs instead of flagging them
    group_by: Literal["app", "cmdline"] = method("app")  # first token of the command line, or all of it
    all_runs: bool = method(False)  # categorize every valid run, not just representatives

    # --- record cleaning (SPEC 3.1) ---
    clock_slack_seconds: float = method(1.0, **NON_NEGATIVE)  # timestamps may exceed run time by max(this,
    clock_slack_fraction: float = method(
        0.01, **NON_NEGATIVE
    )  # this * run time) before the record is dropped
    max_run_time_seconds: float = method(
        400 * 86400.0, **POSITIVE
    )  # longer runs are bad_job (bogus end times)

    # --- merging (SPEC 3.3) ---
    minor_rate_fraction: float = method(
        0.01, **SHARE
    )  # slow: under this * median rate; minor when also light (SPEC 3.3)
    neighbor_gap_runtime_fraction: float = method(0.001, **SHARE)  # gap < 0.1 % of run time
    neighbor_gap_duration_fraction: float = method(0.01, **SHARE)  # gap < 1 % of merged duration

    # --- mean-shift periodicity (SPEC 3.4) ---
    meanshift_bandwidth: float = method(math.log(1.25), **POSITIVE)
    min_periodic_segments: int = method(3, lo=2)
    periodic_regular_share: float = method(
        0.5, **SHARE
    )  # share of a periodic cluster's gaps alike (segments._recurs)
    periodic_segment_share: float = method(0.75, **SHARE)
    min_period_seconds: float = method(
        1.0, **NON_NEGATIVE
    )  # closer repeats are request cadence (SPEC 3.4, 3.5)
    train_gap_factor: float = method(
        2.0, lo=1.0
    )  # a gap over this * the median one ends a train (segments._period)
    period_second_max: float = method(30.0, **POSITIVE)
    period_minute_max: float = method(30 * 60.0, **POSITIVE)
    period_hour_max: float = method(12 * 3600.0, **POSITIVE)
    low_busy_max: float = method(0.25, **SHARE)
    high_busy_min: float = method(0.75, **SHARE)
    # a heatmap burst's busy time is bounded by the time the job spent in the direction's
    # calls (the slowest rank's, SPEC 3.9): bins cannot show an access shorter than a bin
    busy_bounded_by_time_spent: bool = method(True)
    meanshift_min_duration: float = method(
        1e-6, **POSITIVE
    )  # floors before log(): Darshan's clock resolution
    meanshift_min_bytes: float = method(1.0, **POSITIVE)  # and one byte, so log() of a zero stays finite

    # --- FFT periodicity (SPEC 3.5) ---
    fft_max_samples: int = method(1 << 16, lo=1)
    fft_z_threshold: float = method(3.0, **NON_NEGATIVE)
    fft_peak_fraction: float = method(0.8, **SHARE)
    fft_min_periods: float = method(3.0, lo=1.0)
    fft_min_score: float = method(0.3, **SHARE)
    fft_min_samples: int = method(1 << 10, lo=1)  # enough frequency range when operations are long
    fft_bins_per_operation: float = method(4.0, **POSITIVE)  # bins across the shortest operation
    fft_min_bin_seconds: float = method(
        0.25, **NON_NEGATIVE
    )  # no finer: a quarter of min_period_seconds; finer bins only show faster cadence (its aliases: fft_min_exact_share)
    fft_score_smoothing: float = method(0.1, **SHARE)  # score smooths over this share of the period
    fft_min_significance: float = method(2.5, **NON_NEGATIVE)  # score must beat chance by this many sigmas
    fft_oversampling: int = method(2, lo=1)  # spectrum points per frequency bin (zero padding)
    fft_min_exact_share: float = method(
        0.5, **NON_NEGATIVE
    )  # the operations' exact Fourier amplitude at the peak / the bins': below, an alias of faster I/O
    verdict_fft_min_score: float = method(
        0.8, **SHARE
    )  # "meanshift_or_scored_fft": FFT alone needs this score ("meanshift_or_strong_fft": below 5 sigmas)
    verdict_fft_min_significance: float = method(
        5.0, **NON_NEGATIVE
    )  # "meanshift_or_significant_fft", "meanshift_or_strong_fft": FFT alone needs this, whatever its score
    verdict_fft_strong_min_significance: float = method(
        3.5, **NON_NEGATIVE
    )  # "meanshift_or_strong_fft": or this, with a score >= verdict_fft_min_score (few periods)
    verdict_rule: VerdictRule = method("meanshift_or_strong_fft")  # measured best: docs/periodicity.md

    # --- temporality (SPEC 3.6) ---
    significant_bytes: float = method(1e8, **NON_NEGATIVE)
    chunk_dominance: float = method(2.0, **POSITIVE)  # on_start / on_end
    chunk_minor_divisor: float = method(5.0, **POSITIVE)  # after_start / before_end
    chunk_middle_ratio: float = method(4.0, **POSITIVE)  # after_start_before_end / on_start_and_end
    steady_cv: float = method(0.25, **NON_NEGATIVE)
    # the HEATMAP gives the quarters' shares when a quarter holds at least this many bins (a
    # run shorter than a bin would read as evenly spread): SPEC 3.6
    heatmap_quarter_bins: float = method(4.0, **POSITIVE)

    # --- metadata (SPEC 3.7) ---
    metadata_seeks: bool = method(
        False
    )  # count seeks as requests (the paper's rule); an lseek never reaches a metadata server
    metadata_high_spike: int = method(250, lo=0)  # a second with MORE than this many requests
    metadata_spike_level: int = method(50, lo=1)  # a second with at least this many is a spike
    metadata_min_spikes: int = method(5, lo=1)
    metadata_density_mean: float = method(50.0, **NON_NEGATIVE)

    # --- corpus statistics and figures (SPEC 3.8, 6) ---
    correlation_min_probability: float = method(0.6, **SHARE)  # noteworthy when P(B | A) >= this
    correlation_min_support: float = method(0.01, **SHARE)  # ... and A and B together on >= this share
    heatmap_display_min: float = method(0.01, **SHARE)  # heatmaps show only cells above this (paper Fig. 5)
    stability_histogram_bins: int = method(10, lo=1)  # bins over [0, 1] of per-application stability

    # --- file-system load: the center's timeline and each run's concurrent load (SPEC 3.10) ---
    # Mount points (starting with "/") or file-system types that jobs share; every other
    # mount is node-local: kept apart in a run's activity, never in the center's load.
    shared_file_systems: tuple[str, ...] = method(
        ("lustre", "gpfs", "nfs", "nfs4", "beegfs", "fuse.beegfs", "cephfs", "ceph", "pvfs2")
        + ("orangefs", "panfs", "wekafs", "dvs", "glusterfs", "fuse.glusterfs", "daos", "fuse.dfuse")
    )
    timeline_bin_seconds: float = method(60.0, **POSITIVE)  # the center's timeline: one bin this wide
    load_overlaps_kept: int = method(
        10, lo=0
    )  # run_overlaps keeps a run's this many heaviest others per file system

    # --- who slows whom: contention sensitivity, slow runs, conflicting labels (SPEC 3.11) ---
    contention_min_runs: int = method(20, lo=3)  # a group is tested with at least this many measured runs
    contention_fdr_q: float = method(0.05, lo=0.0, hi=1.0, lo_open=True)  # Benjamini-Hochberg level
    contention_permutation_below: int = method(30, lo=0)  # fewer runs: seeded permutation p, else asymptotic
    contention_permutations: int = method(4999, lo=99)  # permutations of a small group's test
    contention_bootstrap: int = method(999, lo=99)  # bootstrap resamples of a slope
    contention_seed: int = method(55, lo=0)  # seeds every permutation and bootstrap (reproducible labels)
    contention_exposed_min_bps: float = method(1e6, **NON_NEGATIVE)  # a run met load above this (bytes/s)
    contention_exposed_min_runs: int = method(3, lo=1)  # ... in at least this many runs: the group is exposed
    # insensitive: the slowdown at a busy hour's load is bounded within 1 +- this
    contention_insensitive_effect: float = method(0.25, **POSITIVE)
    contention_busy_quantile: float = method(0.9, **SHARE)  # "a busy hour": this quantile of the runs' loads
    contention_side_sample: int = method(1000, lo=10)  # distance correlation and NMI: at most this many runs
    contention_baseline_quantile: float = method(0.25, **SHARE)  # low load: at or below this load quantile
    contention_slow_mads: float = method(3.0, **POSITIVE)  # slow: log slowdown above k robust sigmas ...
    contention_slow_min_ratio: float = method(1.25, lo=1.0)  # ... and slowdown at least this
    # a run moving less than this share of its group's median bytes has no comparable time per byte
    contention_min_bytes_share: float = method(0.01, **SHARE)
    contention_cause_min_share: float = method(0.3, **SHARE)  # a named cause: >= this share of others' bytes
    contention_many_jobs_quantile: float = method(0.95, **SHARE)  # "many jobs at once": load above it
    contention_metadata_rate: float = method(300.0, **POSITIVE)  # trait "metadata": requests/s during I/O
    contention_small_request_bytes: float = method(65536.0, **POSITIVE)  # trait "small_requests": mean below
    contention_pair_min_runs: int = method(3, lo=1)  # a label pair is fitted with >= this many victim runs
    # the conflict matrix's familywise level (Bonferroni over its estimable pairs)
    contention_matrix_alpha: float = method(0.05, lo=0.0, hi=1.0, lo_open=True)
    # --- I/O signatures (SPEC 3.12) ---
    signature_min_runs: int = method(
        5, lo=2
    )  # an application's signature needs this many timed runs (IOSI: 5-10)
    signature_max_runs: int = method(
        30, lo=2
    )  # ... built from its this many most recent runs (by start): what it does now, at a bounded cost
    signature_points: int = method(
        256, lo=256, hi=1 << 16
    )  # points over the normalized run time (a level-2 dmey decomposition needs 248 or more)
    signature_series_max_points: int = method(
        4096, lo=16
    )  # a run's stored series keeps its own steps up to this many, then even bins of the run time
    signature_max_lag_share: float = method(0.05, **SHARE)  # runs shift by at most this share of run time
    signature_lof_neighbors: int = method(10, lo=1)  # LOF's k (at most the runs less one)
    signature_lof_threshold: float = method(2.0, lo=1.0)  # a run whose LOF score is above this is an outlier
    signature_burst_level: float = method(
        0.1, **SHARE
    )  # a burst: the smoothed bandwidth above background + this share of (peak - background)
    signature_burst_min_share: float = method(
        0.01, **SHARE
    )  # ... and carrying at least this share of the run's bytes in its direction (less: background)
    signature_gamma: float = method(0.5, **SHARE)  # CLIQUE: a dense unit holds bursts of this share of runs
    signature_kappa: float = method(0.9, **SHARE)  # ... and its neighbourhood of this share: a common burst
    signature_length_agree: float = method(
        0.1, **NON_NEGATIVE
    )  # runs' lengths agree (absolute-time signature too) when (p90 - p10) / p50 of run time is at most this

    # ===== execution: how the batch is spread and bounded (SPEC 5) =====
    trace_timeout_seconds: float = execution(60.0, **POSITIVE)
    batch_size: int = execution(
        4096, lo=1
    )  # logs per validation job at most (a job and its worker fork cost ~30-40 ms of CPU); validation ramps up to it (pipeline._batches)
    categorize_batch_size: int = execution(
        1024, lo=1
    )  # logs per categorization job at most: a log costs ~5x its validation, and smaller jobs keep every core busy to the end
    batch_bytes: int = execution(
        16 << 20, lo=1
    )  # a batch also closes at this many bytes of logs: heavy logs spread over every core
    jobs_in_flight_per_cpu: int = execution(2, lo=1)  # dispy jobs queued per node CPU (bounds parent memory)
    node_pulse_seconds: float = execution(
        1.0, lo=0.1, hi=1000.0
    )  # a node silent for 5 pulses is dead; its jobs move on (dispy's pulse_interval takes 0.1-1000)
    node_ping_seconds: float = execution(
        2.0, lo=1.0, hi=1000.0
    )  # named nodes that have not joined (started after the run, restarted) are asked again this often (dispy's ping_interval takes 1-1000)
    node_start_timeout_seconds: float = execution(60.0, **POSITIVE)  # wait this long for dispy nodes to join
    dispy_port: int = execution(
        9700, lo=1, hi=65534
    )  # dispynode's -p (dispy's default); a local node picks a free one
    node_secret_file: str = execution(
        "~/.config/mosaic/node-secret"
    )  # `--nodes`: the dispy nodes' secret (cluster/start-node.sh reads the same file); owner-only, 16+ chars
    client_address: str = execution(
        ""
    )  # `--nodes`: the address (or host name) of this machine the nodes reach the run at; "": the one that routes to the first node off the loopback
    meanshift_implementation: Literal["numpy", "sklearn"] = execution(
        "numpy"
    )  # same labels; numpy skips sklearn's ~9 ms per fit
    node_lost_timeout_seconds: float = execution(
        120.0, **POSITIVE
    )  # no live dispy node this long: the run stops (resumable)
    worker_memory_bytes: int = execution(
        1 << 30, lo=1 << 20
    )  # address space a batch worker may add (RLIMIT_AS); past it: too_large
    max_log_bytes: int = execution(
        1 << 30, lo=1
    )  # a log file or archive member as stored; larger: too_large, never read
    max_inflated_bytes: int = execution(
        1 << 30, lo=1
    )  # one log's decompressed data, all regions; past it: too_large
    max_job_bytes: int = execution(
        1 << 20, lo=4096
    )  # a log's job region inflated (job record and metadata, command line, mount table); past it: too_large
    max_name_chars: int = execution(
        4096, lo=64
    )  # an application or command line longer is kept as its start and a hash of the whole (trace.bounded_name)

    # ===== service: the scheduler API (mosaic serve) =====
    service_max_request_bytes: int = service(64 << 20, lo=1)  # larger bodies get 413, checked while reading
    service_max_header_bytes: int = service(64 << 10, lo=1024)  # a larger request head gets 431 before auth
    service_request_timeout_seconds: float = service(
        10.0, **POSITIVE
    )  # head, then body, must arrive within this
    service_max_connections: int = service(
        1000, lo=1
    )  # past it the connection without progress longest (owing a head or body, not reading, pipelining) is dropped, never the newcomer
    service_write_timeout_seconds: float = service(
        5.0, **POSITIVE
    )  # a response none of whose bytes drain this long (a client not reading) closes the connection
    service_max_pipelined_requests: int = service(
        32, lo=0
    )  # requests queued on a connection behind the one answered; one more: 429 and the connection closes
    service_spool_bytes: int = service(1 << 20, lo=0)  # bodies above this stream to a temp file, not memory
    service_max_queued: int = service(
        64, lo=1
    )  # categorizations admitted at once (body arriving, waiting for a worker, categorized); one more: 429 before its body is read
    service_max_queued_per_client: int = service(
        8, lo=1
    )  # ... of them, one client's (source address and token); one more: 429
    service_queue_timeout_seconds: float = service(
        30.0, **POSITIVE
    )  # a categorization waiting longer for a worker gets 503 (workers go to the client with fewest running first)
    service_ipv6_client_prefix: int = service(
        64, lo=1, hi=128
    )  # IPv6 clients are told apart by this many leading bits (a /64 is one site): their shares of connections and queue
    service_retry_after_seconds: int = service(5, lo=1)  # Retry-After of those 429 and 503
    service_shutdown_seconds: int = service(
        10, lo=0
    )  # SIGTERM: requests under way get this long, then are dropped and the workers stopped
    profile_min_periodic_share: float = service(
        0.5, **SHARE
    )  # an application profile names a period class when a direction is periodic in this share of its runs
    profile_window_runs: int = service(
        2000, lo=1
    )  # a profile's medians and p10-p90 are over the group's this many most recent runs (counts over all): a lookup's cost stays bounded
    store_listing_seconds: float = service(
        2.0, **POSITIVE
    )  # a listing (GET /v1/applications without app, mosaic apps) taking longer is stopped with 503: it never holds the store for long
    store_durable_posts: bool = service(
        True
    )  # the service syncs each store=true post to disk before its 200 (SQLite synchronous=FULL): a power loss keeps every acknowledged post
    explain_close_margin: float = service(
        0.2, **SHARE
    )  # reasons (categorize --explain, explain=true): within this share of a threshold a label not given is explained, one given is a close call
    explain_peak_files: int = service(
        3, lo=1
    )  # reasons and the job page name this many files behind the metadata peak, the most requests first
    # The Slurm epilog (mosaic epilog, cluster/slurm-epilog.sh):
    epilog_max_logs: int = service(
        64, lo=1
    )  # logs posted per job (a job of 64 steps with Darshan writes 64; its later ones are spooled), and spooled logs each epilog retries first
    epilog_max_deferred_logs: int = service(
        4096, lo=0
    )  # a job's logs past epilog_max_logs kept in the spool for later epilogs (more are reported lost)
    epilog_post_timeout_seconds: float = service(
        10.0, **POSITIVE
    )  # one post; past it the log goes to the spool (it may have been recorded: posting twice is harmless)
    epilog_max_days: int = service(
        62, lo=1
    )  # day folders searched, from the job's start day on (Slurm's usual MaxTime is 30 days)
    # The running-jobs registry (mosaic/service/registry.py, cluster/slurm-prolog.sh, /v1/running):
    running_grace_seconds: float = service(
        600.0, **NON_NEGATIVE
    )  # a job whose end never came (lost post, dead controller) leaves the registry at its start + time limit + this (Slurm's OverTimeLimit, KillWait and its epilog fit in it)
    running_unlimited_max_seconds: float = service(
        7 * 86400.0, **POSITIVE
    )  # a job of time limit UNLIMITED (or unknown) whose end never came leaves the registry this long after its start
    running_max_jobs: int = service(
        100_000, lo=1
    )  # jobs the registry holds as running at once; a start past it is refused (503 registry_full): a burst of posts never grows the store without bound
    running_keep_ended_seconds: float = service(
        7 * 86400.0, **NON_NEGATIVE
    )  # an ended or expired job's row is kept this long (a start spooled through an outage is refused as late, not counted as running), then `mosaic store prune` drops it
    running_clock_skew_seconds: float = service(
        300.0, **NON_NEGATIVE
    )  # a start or end this far in the service's future is taken (the controller's clock may run ahead); further is refused (422)
    running_drain_posts: int = service(
        256, lo=0
    )  # spooled prolog and end posts each `mosaic epilog post` retries before its own (`mosaic epilog drain` retries them all)
    service_latency_buckets: tuple[float, ...] = service(
        (  # /metrics histogram bounds, seconds
            0.001,
            0.0025,
            0.005,
            0.01,
            0.025,
            0.05,
            0.1,
            0.25,
            0.5,
            1.0,
            2.5,
            10.0,
            60.0,
        )
    )
    # The forecast at submission (mosaic.forecast, GET /v1/forecast, docs/method.md 3.13):
    forecast_bins: int = service(
        60, lo=1
    )  # the horizon (the candidate's expected run time) is cut into this many bins, the load ahead given bin by bin
    forecast_min_runs: int = service(
        5, lo=1
    )  # a candidate whose application has fewer stored runs is answered "too few runs" (IOSI needs 5 to 10)
    forecast_phase_min_share: float = service(
        0.05, **SHARE
    )  # a signature without bursts: its I/O phases are where its median rate is at least this share of its peak
    forecast_medium_slowdown: float = service(
        1.2, lo=1.0
    )  # risk medium from this expected slowdown (the candidate's own, or 1 + what it adds to a running sensitive job)
    forecast_high_slowdown: float = service(1.5, lo=1.0)  # risk high from this one (the slowed runs' 1.5x)
    forecast_conflict_min_share: float = service(
        0.05, **SHARE
    )  # a running job is a conflict when it carries at least this share of the load during the candidate's I/O
    forecast_max_conflicts: int = service(10, lo=0)  # conflicts listed, the largest share first
    forecast_default_horizon_seconds: float = service(
        3600.0, **POSITIVE
    )  # the horizon when the candidate's run time is unknown (an unknown application without a time limit)
    forecast_assume_sensitive: bool = service(
        True
    )  # an application not judged (no sensitivity row, "not enough runs") takes the median slope of the center's sensitive ones

    # ===== truth: the ground-truth generators (mosaic synth) =====
    truth_margin: float = truth(
        0.1, **SHARE
    )  # assert a rule's outcome only this far (relative) from its threshold
    truth_busy_margin: float = truth(
        0.05, **SHARE
    )  # busy labels only this far inside low_busy_max / high_busy_min
    truth_periodic_share: float = truth(
        0.85, **SHARE
    )  # design share of periodic segments to assert `periodic`
    truth_min_occurrences: int = truth(5, lo=1)  # held-out truth: a series asserts `periodic` from this many

    # ===== display: how figures show what was computed (mosaic figures) =====
    # P(B | A) cells of a category A carried by fewer traces are drawn grey: 100 % of 3 is no finding.
    figures_min_support: int = display(20, lo=1)
    # The HTML pages (mosaic explain, mosaic report):
    report_top_applications: int = display(
        10, lo=0
    )  # `mosaic report`: a page for each of this many applications by runs, and as many by bytes
    report_jobs_per_application: int = display(
        2, lo=0
    )  # ... each links job pages of its heaviest categorized run and latest ones, this many in all (~1.5 s a page)
    report_table_rows_per_file: int = display(
        5000, lo=10
    )  # `mosaic report`: the applications table's rows per data file (~150 B a row), the rest loaded on demand
    report_chart_points: int = display(
        2000, lo=16
    )  # points of an interactive chart at most: longer series show the peak of each stretch
    display_name_chars: int = display(
        120, lo=16
    )  # a name from a log (application, file) in a figure: longer shows its start and end around an ellipsis

    def __post_init__(self) -> None:
        hints = _type_hints()
        for f in dataclasses.fields(self):
            _check(f, hints[f.name], getattr(self, f.name))
        for lower, upper, equal, why in ORDERINGS:
            low, high = getattr(self, lower), getattr(self, upper)
            if low > high or (low == high and not equal):
                relation = "<=" if equal else "<"
                raise ValueError(
                    f"{lower} = {low!r}, {upper} = {high!r}: need {lower} {relation} {upper} ({why})"
                )
        buckets = self.service_latency_buckets
        if any(b <= a for a, b in zip(buckets, buckets[1:])):
            raise ValueError(f"service_latency_buckets = {list(buckets)!r}: bounds must increase")

    def hash(self) -> str:
        """Short stable digest of the ``method`` section (stored results' tag)."""
        payload = json.dumps(self.section("method"), sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]

    def section(self, name: str) -> dict[str, Any]:
        """The settings of one section, as plain JSON-ready values."""
        return {k: v for k, v in self.to_dict().items() if SECTION_OF[k] == name}

    def to_dict(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(self).items()}

    def replace(self, **changes: Any) -> Config:
        changes = {k: tuple(v) if isinstance(v, list) else v for k, v in changes.items()}
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_toml(cls, path: str | Path, base: Config | None = None) -> Config:
        """Load overrides from TOML; unknown keys are an error, not a silent typo.

        Every error names the file: tomllib's own says only the line and column.
        """
        with open(path, "rb") as fh:
            try:
                data = tomllib.load(fh)
            except tomllib.TOMLDecodeError as error:
                raise ValueError(f"{path}: not valid TOML: {error}") from None
        flat: dict[str, Any] = {}
        for key, value in data.items():
            if isinstance(value, dict):
                if key not in SECTIONS:
                    raise ValueError(
                        f"{path}: unknown table [{key}]{_nearest(key, SECTIONS)}; "
                        f"tables are {', '.join(SECTIONS)}"
                    )
                misplaced = sorted(k for k in value if SECTION_OF.get(k, key) != key)
                if misplaced:
                    raise ValueError(
                        f"{path}: {', '.join(misplaced)} not in [{key}] "
                        f"(belongs in [{SECTION_OF[misplaced[0]]}])"
                    )
                flat.update(value)
            else:
                flat[key] = value
        unknown = sorted(set(flat) - set(SECTION_OF))
        if unknown:
            named = ", ".join(key + _nearest(key, SECTION_OF) for key in unknown)
            raise ValueError(f"unknown configuration keys in {path}: {named}")
        return (base or cls()).replace(**flat)


@dataclass(frozen=True)
class Settings:
    """Base of an analysis step's settings: exactly the :class:`Config` fields it reads.

    A step that reads more than three fields takes one of these instead of the
    whole Config, so its signature says what it depends on; fewer are passed
    as keyword arguments named like the fields. Fields keep Config's names (a
    grep for one finds every step that reads it) and have no defaults: Config
    holds them and checks every value, and :meth:`of` is the one place a
    Settings is built from it.
    """

    @classmethod
    def of(cls, config: Config) -> Self:
        # __dataclass_fields__ in order (a Settings declares no ClassVar): a third
        # cheaper than dataclasses.fields(), and a significant direction builds five
        return cls(*[getattr(config, name) for name in cls.__dataclass_fields__])


def _nearest(word: str, known: typing.Iterable[str]) -> str:
    """ " (did you mean X?)" for the known name closest to a typo, as click says of a flag."""
    close = difflib.get_close_matches(word, list(known), n=1)
    return f" (did you mean {close[0]}?)" if close else ""


@functools.cache
def _type_hints() -> dict[str, Any]:
    return typing.get_type_hints(Config)


def _check(f: dataclasses.Field[Any], hint: Any, value: Any) -> None:
    """Raise ValueError naming the key, the value and what is allowed."""
    name = f.name
    origin = typing.get_origin(hint)
    if origin is Literal:
        allowed = typing.get_args(hint)
        if value not in allowed:
            raise ValueError(f"{name} = {value!r}: choose from {', '.join(map(repr, allowed))}")
        return
    if origin is tuple:
        item = typing.get_args(hint)[0]
        if not isinstance(value, tuple) or not all(_is(item, v) for v in value):
            raise ValueError(f"{name} = {value!r}: expected a list of {item.__name__}")
        return
    if not _is(hint, value):
        raise ValueError(f"{name} = {value!r}: expected {hint.__name__}")
    meta = f.metadata
    lo, hi = meta.get("lo"), meta.get("hi")
    if hint in (int, float) and (
        (lo is not None and (value < lo or (meta["lo_open"] and value == lo)))
        or (hi is not None and (value > hi or (meta["hi_open"] and value == hi)))
        or (isinstance(value, float) and not math.isfinite(value))
    ):
        left = "(" if meta["lo_open"] else "["
        right = ")" if meta["hi_open"] else "]"
        span = f"{left}{'-inf' if lo is None else lo}, {'inf' if hi is None else hi}{right}"
        raise ValueError(f"{name} = {value!r}: must be a finite number in {span}")


def _is(kind: Any, value: Any) -> bool:
    """Strict type check: a bool is not a number, an int is a valid float."""
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, kind)


SECTION_OF = {f.name: f.metadata["section"] for f in dataclasses.fields(Config)}
DEFAULT = Config()
