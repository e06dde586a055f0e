"""The statistics the contention step takes from numpy and scipy.special: scipy.stats's bits."""

import numpy as np
import pytest
import scipy.special
import scipy.stats

from mosaic.interference import sensitivity


@pytest.mark.parametrize("n", [0, 1, 2, 3, 10, 101])
def test_ranks_and_bh_are_scipy_stats(n):
    rng = np.random.default_rng(n)
    for values in (rng.normal(size=n), rng.integers(0, 4, n).astype(float), rng.integers(0, 4, n)):
        assert (
            sensitivity._ranks(values).tobytes() == np.asarray(scipy.stats.rankdata(values), float).tobytes()
        )
    p = rng.random(n)
    p[: n // 3] = p[0] if n else 0.0  # ties
    ours = sensitivity.benjamini_hochberg(p)
    assert ours.tobytes() == np.asarray(scipy.stats.false_discovery_control(p, method="bh"), float).tobytes()


def test_ties_nan_and_bad_p():
    assert sensitivity._ranks(np.array([3.0, 1.0, 3.0, 2.0])).tolist() == [3.5, 1.0, 3.5, 2.0]
    assert np.isnan(sensitivity._ranks(np.array([1.0, np.nan]))).all()
    assert sensitivity.benjamini_hochberg([0.04, 0.01, 0.03]).tolist() == pytest.approx([0.04, 0.03, 0.04])
    with pytest.raises(ValueError):
        sensitivity.benjamini_hochberg([0.5, 1.5])


def test_t_tail_and_normal_quantile():
    for t in (-2.0, 0.0, 0.7, 3.1):
        for df in (1, 5, 40):
            assert float(scipy.special.stdtr(df, -t)) == float(scipy.stats.t.sf(t, df))
    for q in (0.975, 1 - 0.05 / 200):
        assert float(scipy.special.ndtri(q)) == float(scipy.stats.norm.ppf(q))
