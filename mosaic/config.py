"""Every threshold of SPEC.md in one place.

All defaults live here and nowhere else; a TOML file passed with ``--config``
overrides any subset of them (same names, flat keys or grouped in tables whose
names are ignored). The hash of the effective configuration tags stored
results so that a changed threshold invalidates them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar


@dataclass(frozen=True)
class Config:
    # --- input filtering (SPEC 2) ---
    mounts: tuple[str, ...] = ()  # keep only files under these prefixes; () = all
    excluded_prefixes: tuple[str, ...] = ("/proc", "/sys", "/dev")
    strict: bool = False  # evict partial logs instead of flagging them
    group_by: str = "app"  # "app" (first token of the command line) or "cmdline"
    all_runs: bool = False  # categorize every valid run, not just representatives

    # --- record cleaning (SPEC 3.1) ---
    clock_slack_seconds: float = 1.0  # timestamps may exceed run time by max(this,
    clock_slack_fraction: float = 0.01  # this * run time) before the record is dropped
    max_run_time_seconds: float = 400 * 86400.0  # longer runs are bad_job (bogus end times)

    # --- merging (SPEC 3.3) ---
    minor_rate_fraction: float = 0.01  # ops slower than this * median rate skip merging
    neighbor_gap_runtime_fraction: float = 0.001  # gap < 0.1 % of run time
    neighbor_gap_duration_fraction: float = 0.01  # gap < 1 % of merged duration

    # --- mean-shift periodicity (SPEC 3.4) ---
    meanshift_bandwidth: float = math.log(1.25)
    min_periodic_segments: int = 3
    periodic_regular_share: float = 0.5  # share of a periodic cluster's gaps alike (segments._recurs)
    periodic_segment_share: float = 0.75
    period_second_max: float = 30.0
    period_minute_max: float = 30 * 60.0
    period_hour_max: float = 12 * 3600.0
    low_busy_max: float = 0.25
    high_busy_min: float = 0.75
    meanshift_min_duration: float = 1e-6  # floors before log(): Darshan's clock resolution
    meanshift_min_bytes: float = 1.0  # and one byte, so log() of a zero stays finite

    # --- FFT periodicity (SPEC 3.5) ---
    fft_max_samples: int = 1 << 16
    fft_z_threshold: float = 3.0
    fft_peak_fraction: float = 0.8
    fft_min_periods: float = 3.0
    fft_min_score: float = 0.3
    fft_min_samples: int = 1 << 10  # enough frequency range when operations are long
    fft_bins_per_operation: float = 4.0  # bins across the shortest operation
    fft_min_bin_seconds: float = 0.1  # no finer (FTIO's 10 Hz): bins keep short bursts anyway
    fft_score_smoothing: float = 0.1  # score smooths over this share of the period
    fft_min_significance: float = 2.5  # score must beat chance by this many sigmas
    fft_oversampling: int = 2  # spectrum points per frequency bin (zero padding)
    verdict_fft_min_score: float = 0.8  # "meanshift_or_scored_fft": FFT alone needs this score
    verdict_fft_min_significance: float = 5.0  # "meanshift_or_significant_fft": FFT alone needs this
    verdict_rule: str = "meanshift_or_significant_fft"  # measured best: docs/periodicity.md

    # --- temporality (SPEC 3.6) ---
    significant_bytes: float = 1e8
    chunk_dominance: float = 2.0  # on_start / on_end
    chunk_minor_divisor: float = 5.0  # after_start / before_end
    chunk_middle_ratio: float = 4.0  # after_start_before_end / on_start_and_end
    steady_cv: float = 0.25

    # --- metadata (SPEC 3.7) ---
    metadata_high_spike: int = 250  # a second with MORE than this many requests
    metadata_spike_level: int = 50  # a second with at least this many is a spike
    metadata_min_spikes: int = 5
    metadata_density_mean: float = 50.0

    # --- corpus statistics and figures (SPEC 3.8, 6) ---
    correlation_min_probability: float = 0.6  # noteworthy when P(B | A) >= this
    correlation_min_support: float = 0.01  # ... and A and B together on >= this share
    heatmap_display_min: float = 0.01  # heatmaps show only cells above this (paper Fig. 5)
    stability_histogram_bins: int = 10  # bins over [0, 1] of per-application stability

    # --- execution (SPEC 5) ---
    trace_timeout_seconds: float = 60.0
    batch_size: int = 256
    jobs_in_flight_per_cpu: int = 2  # dispy jobs queued per node CPU (bounds parent memory)
    node_pulse_seconds: float = 1.0  # a node silent for 5 pulses is dead; its jobs move on
    node_start_timeout_seconds: float = 60.0  # wait this long for dispy nodes to join
    dispy_port: int = 9700  # dispynode's -p (dispy's default); a local node picks a free one

    # --- scheduler service (mosaic serve) ---
    service_max_request_bytes: int = 64 << 20  # larger bodies get 413, checked while reading
    service_latency_buckets: tuple[float, ...] = (  # /metrics histogram bounds, seconds
        0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0, 60.0)

    # --- synthetic ground truth (mosaic synth) ---
    truth_margin: float = 0.1  # assert a rule's outcome only this far (relative) from its threshold
    truth_busy_margin: float = 0.05  # busy labels only this far inside low_busy_max / high_busy_min
    truth_periodic_share: float = 0.85  # design share of periodic segments to assert `periodic`
    truth_min_occurrences: int = 5  # held-out truth: a series asserts `periodic` from this many

    # How work is spread and served, not what it computes: left out of hash().
    EXECUTION_ONLY: ClassVar[tuple[str, ...]] = (
        "batch_size", "jobs_in_flight_per_cpu", "node_pulse_seconds",
        "node_start_timeout_seconds", "dispy_port", "service_max_request_bytes",
        "service_latency_buckets")

    def hash(self) -> str:
        """Short stable digest of the settings that change results (stored results' tag)."""
        settings = {k: v for k, v in self.to_dict().items() if k not in self.EXECUTION_ONLY}
        payload = json.dumps(settings, sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]

    def to_dict(self) -> dict:
        return {k: list(v) if isinstance(v, tuple) else v
                for k, v in dataclasses.asdict(self).items()}

    def replace(self, **changes) -> "Config":
        changes = {k: tuple(v) if isinstance(v, list) else v for k, v in changes.items()}
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_toml(cls, path: str | Path, base: "Config | None" = None) -> "Config":
        """Load overrides from TOML; unknown keys are an error, not a silent typo."""
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
        flat: dict = {}
        for key, value in data.items():
            if isinstance(value, dict):
                flat.update(value)
            else:
                flat[key] = value
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(flat) - known)
        if unknown:
            raise ValueError(f"unknown configuration keys in {path}: {', '.join(unknown)}")
        return (base or cls()).replace(**flat)


DEFAULT = Config()
