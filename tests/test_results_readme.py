"""results/README.md describes what `make run` makes of the sample year: its numbers are the
sample's (they said 959 evicted, 2,041 valid, 165 applications, 7 partial logs until
2026-11-29, while the sample gives 952, 2,048, 197 and 2)."""

from __future__ import annotations

import json
import re

from mosaic.synth.year import generate_year
from mosaic_testing.logs import REPO


def test_the_funnel_numbers_are_those_of_the_sample_make_run_generates(tmp_path):
    make = (REPO / "Makefile").read_text()
    count = int(re.search(r"^SAMPLE_COUNT \?= (\d+)$", make, re.M).group(1))
    seed = int(re.search(r"synth year \$\(SAMPLE\) --count \$\(SAMPLE_COUNT\) --seed (\d+)", make).group(1))
    generate_year(tmp_path, count, seed=seed)
    truth = [json.loads(line) for line in (tmp_path / "truth.jsonl").read_text().splitlines()]
    valid = [t for t in truth if t["valid"]]
    numbers = {
        "logs": f"{len(truth):,}",
        "evicted": f"{len(truth) - len(valid):,}",
        "valid": f"{len(valid):,}",
        "applications": f"{len({t['group'] for t in valid}):,}",
        "partial": f"{sum(t['partial'] for t in valid):,}",
    }
    text = (REPO / "results/README.md").read_text()
    assert (
        f"![Funnel: {numbers['logs']} logs, {numbers['evicted']} evicted by reason, {numbers['valid']} "
        f"valid, {numbers['applications']} applications]" in text
    )
    said = " ".join(text[text.index("Of 3,000 logs") :].split("\n\n")[0].split())
    share = round(100 * (len(truth) - len(valid)) / len(truth))
    assert said.startswith(f"Of {numbers['logs']} logs, {numbers['evicted']} ({share} %) are evicted")
    assert f"{numbers['partial']} partial logs are kept" in said
    assert f"leaves {numbers['applications']} applications out of {numbers['valid']} valid runs" in said
