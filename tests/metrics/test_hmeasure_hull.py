"""The H-measure's hull (run ends, then peeling) and the KS running sum on awkward shapes:
heavy ties, classifiers below chance, tiny and lopsided groups, checked against the
hmeasure package and scipy's ks_2samp."""

from __future__ import annotations

import warnings

import numpy as np
import polars as pl
import pytest
from hmeasure import h_score
from scipy.stats import ks_2samp

import polaroc as pr


def cases(seed: int, n_cases: int = 60):
    rng = np.random.default_rng(seed)
    for _ in range(n_cases):
        n = int(rng.integers(2, 400))
        y = rng.random(n) < rng.uniform(0.05, 0.95)
        if y.all() or not y.any():
            y[0] = not y[0]
        s = rng.normal(size=n) + rng.uniform(-3, 3) * y  # shifts below 0: below chance
        decimals = int(rng.integers(-1, 3))
        s = 1.0 / (1.0 + np.exp(-np.round(s, decimals) if decimals >= 0 else -s))
        yield s, y


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_h_measure_and_ks_equal_their_oracles_on_awkward_shapes(seed, run):
    parts, want = [], {}
    for i, (s, y) in enumerate(cases(seed)):
        parts.append(pl.DataFrame({"g": i, "s": s, "y": y}))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want[i] = (h_score(y.astype(int), s), ks_2samp(s[y], s[~y]).statistic)
    log = pl.concat(parts)
    got = run(log, lambda f: f.group_by("g").agg(pr.h_measure("s", "y"), pr.ks_statistic("s", "y")))
    assert got.height == len(want)
    for g, h, ks in got.iter_rows():
        assert h == pytest.approx(want[g][0], abs=1e-12)
        assert ks == pytest.approx(want[g][1], abs=1e-12)


def test_a_perfect_an_inverted_and_an_all_tied_classifier():
    y = np.array([0, 0, 1, 1, 0, 1])
    perfect = pl.DataFrame({"s": y * 0.5 + 0.25, "y": y})
    inverted = pl.DataFrame({"s": 0.75 - y * 0.5, "y": y})
    tied = pl.DataFrame({"s": np.full(6, 0.5), "y": y})
    for df, h, ks in ((perfect, 1.0, 1.0), (inverted, 0.0, 1.0), (tied, 0.0, 0.0)):
        row = df.select(pr.h_measure("s", "y"), pr.ks_statistic("s", "y")).row(0)
        assert row == pytest.approx((h, ks), abs=1e-12)
