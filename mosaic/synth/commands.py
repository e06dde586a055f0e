"""`mosaic synth` (make corpora with ground truth) and `mosaic eval` (score results).

Imported lazily by ``mosaic.cli``: heavy modules are imported inside commands.
"""

from __future__ import annotations

import json

import click


@click.group()
def synth() -> None:
    """Generate Darshan logs with known categories (ground truth beside them).

    \b
    mosaic synth scenarios OUT --seeds 5     every scenario of the catalog x 5 seeds
    mosaic synth year OUT --count 3000       a Blue-Waters-like year (dated folders)
    mosaic synth heavy OUT --count 100       heavy logs (512-16,384 ranks, thousands of records)
    mosaic synth contention OUT [--null]     a year sharing /scratch's bandwidth (who slowed whom)
    All write OUT/truth.jsonl; score a run with `mosaic eval RESULTS --truth OUT/truth.jsonl`.
    """


@synth.command()
@click.argument("out", type=click.Path(file_okay=False), required=False)
@click.option(
    "--seeds",
    default=3,
    show_default=True,
    type=click.IntRange(1, 1000),
    help="Variants of each scenario (ranks, volumes, periods, run times, formats).",
)
@click.option("--only", multiple=True, metavar="NAME", help="Only these scenarios (repeatable); see --list.")
@click.option("--list", "list_only", is_flag=True, help="List the scenarios and exit.")
def scenarios(out: str | None, seeds: int, only: tuple[str, ...], list_only: bool) -> None:
    """Write every scenario x seed under OUT/<scenario>/ and OUT/truth.jsonl."""
    from mosaic.synth.catalog import BY_NAME, SCENARIOS
    from mosaic.synth.corpus import write_scenarios

    if list_only:
        click.echo("\n".join(s.name for s in SCENARIOS))
        return
    if out is None:
        raise click.UsageError("Missing argument 'OUT' (or use --list).")
    unknown = sorted(set(only) - set(BY_NAME))
    if unknown:
        raise click.BadParameter(f"unknown scenario(s): {', '.join(unknown)}", param_hint="--only")
    chosen = tuple(BY_NAME[name] for name in only) or None
    written = write_scenarios(out, seeds, scenarios=chosen)
    click.echo(f"{written} logs and truth.jsonl written to {out}")


@synth.command()
@click.argument("out", type=click.Path(file_okay=False))
@click.option(
    "--count",
    default=3000,
    show_default=True,
    type=click.IntRange(1),
    help="Number of logs (the paper's year: 462502).",
)
@click.option("--seed", default=2019, show_default=True, type=int)
@click.option(
    "--archive-share",
    default=0.05,
    show_default=True,
    type=click.FloatRange(0, 1),
    help="Share of days shipped as one .tar.gz archive of that day's logs.",
)
def year(out: str, count: int, seed: int, archive_share: float) -> None:
    """Write COUNT logs of a Blue-Waters-like year under OUT/2019/MM/DD/ and OUT/truth.jsonl."""
    from mosaic.synth.year import generate_year

    summary = generate_year(out, count, seed, archive_share=archive_share).as_dict()
    click.echo(
        f"{summary['logs']} logs ({summary['invalid']} invalid, {summary['groups']} "
        f"applications) in {summary['seconds']:.1f} s "
        f"({summary['logs_per_second']:.0f} logs/s) -> {out}"
    )


@synth.command()
@click.argument("out", type=click.Path(file_okay=False))
@click.option("--null", "null", is_flag=True, help="The same year with unbounded capacity: nothing slowed.")
@click.option("--count", default=20_000, show_default=True, type=click.IntRange(1), help="Number of logs.")
@click.option("--seed", default=2019, show_default=True, type=int)
def contention(out: str, null: bool, count: int, seed: int) -> None:
    """Write a year whose jobs share /scratch's bandwidth (truth: who slowed whom)."""
    from mosaic.synth.contention_year import generate_contention

    s = generate_contention(out, count, seed, null=null)
    click.echo(
        f"{s['logs']} logs ({s['invalid']} invalid, {s['jobs_without_darshan']} jobs without Darshan), "
        f"{100 * s['slowed_share']:.1f} % of runs slowed, contention bound in "
        f"{100 * s['hours_bound_share']:.1f} % of hours, in {s['seconds']:.1f} s -> {out}"
    )


@synth.command()
@click.argument("out", type=click.Path(file_okay=False))
@click.option(
    "--count",
    default=100,
    show_default=True,
    type=click.IntRange(1),
    help="Number of logs (the heavy scenarios take turns).",
)
@click.option("--seed", default=0, show_default=True, type=int)
def heavy(out: str, count: int, seed: int) -> None:
    """Write COUNT heavy logs under OUT/<scenario>/ and OUT/truth.jsonl."""
    from mosaic.synth.heavy import generate_heavy

    click.echo(f"{generate_heavy(out, count, seed)} heavy logs and truth.jsonl written to {out}")


@click.command("eval")
@click.argument("results", type=click.Path(exists=True, file_okay=False))
@click.option(
    "--truth",
    "truth_path",
    required=True,
    type=click.Path(exists=True, dir_okay=False),
    help="truth.jsonl written by `mosaic synth`.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the scores as JSON.")
def evaluate(results: str, truth_path: str, as_json: bool) -> None:
    """Score RESULTS (traces.jsonl, evicted.jsonl of `mosaic run`) against the truth.

    \b
    Trace accuracy: a log is right when, in every family, all its `must`
    labels are found and none of its `must_not` labels; also per family,
    per scenario and per label (precision / recall). Eviction accuracy,
    and dedup accuracy (representatives = the heaviest runs).
    """
    from mosaic.synth.evaluate import evaluate as score
    from mosaic.synth.evaluate import format_table, mixed_versions

    try:
        scores = score(results, truth_path)
    except ValueError as error:  # no outputs to score, or no truth to score them against
        raise click.ClickException(str(error)) from None
    warning = mixed_versions(scores)
    if warning:
        click.echo(warning, err=True)
    click.echo(json.dumps(scores, indent=2) if as_json else format_table(scores))
