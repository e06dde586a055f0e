"""The sensitivity test's power (SPEC 3.11.1) as a curve over designed effect sizes and
run counts, beside the power of one Spearman test at those sizes, and its false
positives on null years.

    .venv/bin/python -m benchmarks.interference_power [--groups G] [--seeds S]

Designed groups: load lognormal, normalized I/O time from a Gaussian copula whose
Pearson r gives Spearman rho (r = 2 sin(pi rho / 6)). Each cell (rho, runs) holds G
designed groups among G null ones, labelled together (Benjamini-Hochberg across the 2G).
"One test" is a single one-sided Spearman test at level q on the same designed groups,
without correction: what the correction costs. The null rows: S seeds of 3G null groups
of 20, 30 and 60 runs, the share called sensitive against q.
"""

from __future__ import annotations

import argparse
import math

import numpy as np
import scipy.stats

from mosaic.config import Config
from mosaic.interference.sensitivity import GroupRuns, sensitivity

RHOS = (0.2, 0.3, 0.45, 0.6, 0.7, 0.8)
RUNS = (10, 20, 30, 60, 120)


def designed(rng: np.random.Generator, key: str, n: int, rho: float) -> GroupRuns:
    r = 2 * math.sin(math.pi * rho / 6)
    z = rng.standard_normal((n, 2))
    zt = r * z[:, 0] + math.sqrt(1 - r * r) * z[:, 1]
    return GroupRuns(key, 10 * np.exp(0.3 * zt), np.full(n, 10.0), 5e7 * np.exp(z[:, 0]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=100)
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    config = Config(contention_min_runs=8)
    print(f"{'rho':>5} {'runs':>5} {'recall (BH)':>12} {'one test':>9}  (groups per cell: {args.groups})")
    for rho in RHOS:
        for n in RUNS:
            rng = np.random.default_rng([int(rho * 100), n])
            groups = [designed(rng, f"e{i}", n, rho) for i in range(args.groups)]
            groups += [designed(rng, f"z{i}", n, 0.0) for i in range(args.groups)]
            out = sensitivity(groups, config)
            recall = np.mean([g["label"] == "sensitive" for g in out[: args.groups]])
            single = np.mean(
                [
                    scipy.stats.spearmanr(g.load, g.io_time, alternative="greater").pvalue
                    <= config.contention_fdr_q
                    for g in groups[: args.groups]
                ]
            )
            print(f"{rho:>5.2f} {n:>5} {recall:>12.2f} {single:>9.2f}")
    called = total = 0
    for seed in range(args.seeds):
        rng = np.random.default_rng(seed)
        nulls = [designed(rng, f"n{i}", (20, 30, 60)[i % 3], 0.0) for i in range(3 * args.groups)]
        called += sum(g["label"] == "sensitive" for g in sensitivity(nulls, Config()))
        total += len(nulls)
    print(
        f"null: {called} of {total} groups called sensitive "
        f"({called / total:.4f}; q = {Config().contention_fdr_q})"
    )


if __name__ == "__main__":
    main()
