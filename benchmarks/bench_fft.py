"""FFT periodicity detector (SPEC 3.5) against FTIO (`ftio-hpc`) on the same signals.

    .venv/bin/python -m benchmarks.bench_fft [--cases N] [--ftio-python PATH]
    .venv/bin/python -m benchmarks.bench_fft --corpus FOLDER

``--corpus`` instead times our detector as the categorizer runs it, on every
significant direction of the logs under FOLDER (e.g. ``mosaic synth heavy``):
CPU ms per direction (operations signal, plus the heatmap signal when the log
has one; best of 3), median / p99 / max, and the sample counts.

Both detectors see the same generated operations: ours takes them as they
are, FTIO gets the equivalent bandwidth step function (its input format) and
its default settings (10 Hz sampling, z-score outliers, tolerance 0.8).
FTIO lives in its own virtualenv (it pulls ~800 MB of dependencies), default
/tmp/ftio-venv; it runs in a subprocess of that interpreter and its figures
are skipped when that interpreter is missing. Prints, per case family: the
detection rate (periodic and period within 5 %), the median period error of
the detections, the false-positive rate on random input, and the CPU time
per signal (process time, so that other jobs on a shared machine do not
count; ours includes building the signal from the operations, FTIO's its
sampling of the step function, not its 3-4 s import).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

TOLERANCE = 0.05  # a detection counts when the period is within 5 %


def bursts(rng, period, count, duration, jitter=0.0):
    gaps = rng.normal(period, jitter * period, count) if jitter else np.full(count, period)
    starts = rng.uniform(0, period) + np.concatenate([[0.0], np.cumsum(gaps[:-1])])
    truth = float(np.diff(starts).mean())
    return starts, starts + duration, rng.lognormal(20, 0.1, count), starts[-1] + period, truth


def clean(rng):
    period = rng.uniform(5, 600)
    return bursts(rng, period, int(rng.integers(10, 40)), period * rng.uniform(0.05, 0.3))


def jittered(rng):
    period = rng.uniform(5, 600)
    return bursts(rng, period, int(rng.integers(10, 40)), period * rng.uniform(0.05, 0.3), 0.05)


def second_harmonic(rng):
    """Bursts filling ~18 % of the period: the 2nd harmonic is a candidate (FTIO fig. 11)."""
    period = rng.uniform(60, 200)
    return bursts(rng, period, int(rng.integers(8, 20)), 0.18 * period)


def short_checkpoints(rng):
    """20 ms checkpoints every 10-60 s for an hour: FTIO's 10 Hz sampling misses them."""
    period = rng.uniform(10, 60)
    return bursts(rng, period, int(3600 // period), 0.02)


def day_long(rng):
    """30 s bursts every ~10 min over a day."""
    period = rng.uniform(500, 700)
    return bursts(rng, period, int(86_400 // period), 30.0)


def random_io(rng):
    """Bursts at Poisson times: any detection is a false positive."""
    run_time = rng.uniform(300, 3600)
    starts = np.sort(rng.uniform(0, run_time, rng.poisson(rng.uniform(0.02, 0.5) * run_time)))
    ends = np.minimum(starts + rng.exponential(1.0, starts.size), run_time)
    return starts, ends, rng.lognormal(20, 1, starts.size), run_time, None


FAMILIES = {
    "clean": clean,
    "jittered 5 %": jittered,
    "second harmonic": second_harmonic,
    "20 ms checkpoints": short_checkpoints,
    "day long": day_long,
    "random": random_io,
}


def make_cases(count: int) -> dict[str, list]:
    """``count`` seeded cases per family (fewer day-long ones: FTIO needs seconds each)."""
    return {
        name: [
            make(np.random.default_rng(seed))
            for seed in range(max(count // 4, 2) if name == "day long" else count)
        ]
        for name, make in FAMILIES.items()
    }


def step_function(starts, ends, nbytes):
    """The aggregate bandwidth as FTIO reads it: value b[i] from t[i] to t[i+1]."""
    rate = nbytes / (ends - starts)
    times = np.concatenate([[0.0], starts, ends])
    change = np.concatenate([[0.0], rate, -rate])
    order = np.argsort(times, kind="stable")
    return times[order], np.maximum(np.cumsum(change[order]), 0.0)


def run_ours(cases) -> list[dict]:
    from mosaic.analysis.spectrum import SamplingSettings, SpectrumSettings, fft_periodicity
    from mosaic.config import Config

    config = Config()
    sampling, detection = SamplingSettings.of(config), SpectrumSettings.of(config)
    out = []
    for starts, ends, nbytes, run_time, _ in cases:
        tick = time.process_time()
        result = fft_periodicity(starts, ends, nbytes, run_time, sampling, detection)
        out.append(
            {
                "periodic": result["periodic"],
                "period": result["period"],
                "seconds": time.process_time() - tick,
            }
        )
    return out


def ftio_worker(cases_path: str, out_path: str) -> None:
    """Runs inside FTIO's virtualenv: one FTIO analysis per step function."""
    from ftio.cli.ftio_core import core
    from ftio.parse.args import parse_args

    args = parse_args(["-e", "no"], "ftio")
    data = np.load(cases_path)
    out = []
    for i in range(int(data["count"])):
        times, bandwidth = data[f"t{i}"], data[f"b{i}"]
        tick = time.process_time()
        prediction, _ = core(
            {"time": times, "bandwidth": bandwidth, "total_bytes": int(data[f"v{i}"]), "ranks": 1}, args
        )
        frequency, _ = prediction.get_dominant_freq_and_conf()
        seconds = time.process_time() - tick
        periodic = bool(np.isfinite(frequency) and frequency > 0)
        out.append({"periodic": periodic, "period": 1 / frequency if periodic else None, "seconds": seconds})
    Path(out_path).write_text(json.dumps(out))


def run_ftio(python: Path, cases) -> list[dict] | None:
    if not python.exists():
        return None
    with tempfile.TemporaryDirectory() as tmp:
        arrays = {"count": len(cases)}
        for i, (starts, ends, nbytes, _, _) in enumerate(cases):
            arrays[f"t{i}"], arrays[f"b{i}"] = step_function(starts, ends, nbytes)
            arrays[f"v{i}"] = nbytes.sum()
        np.savez(f"{tmp}/cases.npz", **arrays)
        subprocess.run(
            [str(python), __file__, "--ftio-worker", f"{tmp}/cases.npz", f"{tmp}/out.json"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        return json.loads(Path(f"{tmp}/out.json").read_text())


def summarize(cases, results) -> dict:
    truths = [case[4] for case in cases]
    errors = [abs(r["period"] - t) / t for r, t in zip(results, truths) if t and r["periodic"]]
    periodic = [r["periodic"] for r in results]
    found = sum(e <= TOLERANCE for e in errors)
    return {
        "rate": found / len(cases) if truths[0] else float(np.mean(periodic)),
        "error": float(np.median(errors)) if errors else float("nan"),
        "ms": 1e3 * float(np.mean([r["seconds"] for r in results])),
    }


def corpus_cost(folder: Path) -> None:
    """FFT CPU time per significant direction of the logs under ``folder``."""
    from mosaic.analysis import spectrum
    from mosaic.config import Config
    from mosaic.directions import DIRECTIONS
    from mosaic.errors import LogError
    from mosaic.trace import read_trace

    config = Config()
    sampling, detection = spectrum.SamplingSettings.of(config), spectrum.SpectrumSettings.of(config)
    cost, samples = [], []
    for path in sorted(p for p in folder.rglob("*.darshan*") if p.is_file()):
        try:
            trace = read_trace(path, config)
        except LogError:
            continue
        for code, name in enumerate(DIRECTIONS):
            ops = trace.direction(code)
            if ops["bytes"].sum() < config.significant_bytes:
                continue
            best = np.inf
            for _ in range(3):
                tick = time.process_time()
                result = spectrum.fft_periodicity(
                    ops["start"], ops["end"], ops["bytes"], trace.run_time, sampling, detection
                )
                if trace.heatmap is not None:
                    spectrum.heatmap_periodicity(
                        getattr(trace.heatmap, name), trace.heatmap.bin_seconds, detection
                    )
                best = min(best, time.process_time() - tick)
            cost.append(1e3 * best)
            samples.append(result["samples"])
    if not cost:
        print(f"no significant direction under {folder}")
        return
    print(
        f"{len(cost)} significant directions: FFT CPU ms per direction median "
        f"{np.median(cost):.2f}, p99 {np.percentile(cost, 99):.2f}, max {max(cost):.2f}; "
        f"samples median {np.median(samples):.0f}, at the cap "
        f"{np.mean(np.array(samples) == config.fft_max_samples):.0%}"
    )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=40, help="cases per family")
    parser.add_argument("--ftio-python", type=Path, default=Path("/tmp/ftio-venv/bin/python"))
    parser.add_argument("--ftio-worker", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--corpus", type=Path, help="time our detector on these logs instead")
    options = parser.parse_args(argv)
    if options.corpus:
        corpus_cost(options.corpus)
        return
    if options.ftio_worker:
        ftio_worker(*options.ftio_worker)
        return
    families = make_cases(options.cases)
    if not options.ftio_python.exists():
        print(f"ftio-hpc not found at {options.ftio_python}: reporting ours only")
    print(
        f"{'family':18} {'cases':>5} | {'ours: found':>11} {'err':>7} {'CPU ms':>7} |"
        f" {'FTIO: found':>11} {'err':>7} {'CPU ms':>8} | speed-up"
    )
    totals = {"ours": 0.0, "ftio": 0.0}
    for name, cases in families.items():
        ours = summarize(cases, run_ours(cases))
        ftio_results = run_ftio(options.ftio_python, cases)
        line = f"{name:18} {len(cases):5} | {ours['rate']:11.0%} {ours['error']:7.2%} {ours['ms']:7.2f} |"
        totals["ours"] += ours["ms"] * len(cases)
        if ftio_results is not None:
            ftio = summarize(cases, ftio_results)
            totals["ftio"] += ftio["ms"] * len(cases)
            line += (
                f" {ftio['rate']:11.0%} {ftio['error']:7.2%} {ftio['ms']:8.2f} |"
                f" {ftio['ms'] / ours['ms']:6.1f}x"
            )
        print(line)
    print("(random: 'found' is the false-positive rate)")
    if totals["ftio"]:
        print(f"all signals: {totals['ftio'] / totals['ours']:.1f}x faster in total")


if __name__ == "__main__":
    sys.exit(main())
