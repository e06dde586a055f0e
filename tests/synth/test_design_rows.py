"""The design rows build() writes: one per phase, burst and the noise, with a one-off's defaults."""

import numpy as np

from mosaic.synth.scenarios import (
    DESIGN_DTYPE,
    NOISE_COMPONENT,
    NOISE_WINDOW,
    Irregular,
    Periodic,
    Phase,
    Scenario,
    build,
    resolve,
)


def test_rows_say_only_what_differs_from_a_one_off():
    scenario = Scenario(
        "rows",
        ranks=4,
        run_time=1000.0,
        phases=(Phase("read", 0.25, 0.25, 5e9),),
        periodic=(Periodic("write", 100.0, 0.1, 1e9, count=3),),
        irregular=(
            Irregular("write", 2, (1e8, 2e8), (5.0, 10.0)),
            Irregular("read", 3, (1e8, 2e8), (5.0, 10.0), append=True),
        ),
    )
    rng = np.random.default_rng(0)
    design = build(resolve(scenario, rng), rng, "/scratch/rows").design
    assert design.dtype == DESIGN_DTYPE
    assert DESIGN_DTYPE.names == (
        "direction",
        "start",
        "end",
        "bytes",
        "component",
        "period",
        "jitter",
        "count",
        "heatmap_only",
    )
    fixed = ["direction", "component", "period", "jitter", "count", "heatmap_only"]
    rows = [tuple(row[fixed].tolist()) for row in design]
    assert rows == [
        ("read", 0, 0.0, 0.0, 1, False),  # the phase: a one-off
        *[("write", 1, 100.0, 0.0, 3, False)] * 3,  # periodic: offset 0.5, no jitter
        *[("write", 2, 0.0, 0.0, 2, False)] * 2,  # irregular: its burst count, no period
        *[("read", 3, 0.0, 0.0, 3, True)] * 3,  # appended: only the heatmap shows them
        ("read", NOISE_COMPONENT, 0.0, 0.0, 1, False),
    ]
    assert design[0][["start", "end", "bytes"]].tolist() == (250.0, 500.0, 5e9)
    np.testing.assert_array_equal(design["start"][1:4], [50.0, 150.0, 250.0])
    np.testing.assert_array_equal(design["end"][1:4], [60.0, 160.0, 260.0])
    irregular = design[4:9]
    assert ((irregular["bytes"] >= 1e8) & (irregular["bytes"] <= 2e8)).all()
    assert (
        (irregular["end"] - irregular["start"] >= 5.0) & (irregular["end"] - irregular["start"] <= 10.0)
    ).all()
    assert design[-1][["start", "end"]].tolist() == NOISE_WINDOW
