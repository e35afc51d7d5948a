"""Calibration beyond the ECE: ``pr.calibration``'s intercept, slope, Spiegelhalter's test
and Murphy's decomposition.

Oracles: statsmodels' logistic GLM (``offset=`` for calibration in the large, a constant and
logit(p) for the slope, ``freq_weights=`` for weights); scipy's ``brentq`` on the offset
fit's score equation where statsmodels' IRLS fails; Spiegelhalter's z and Murphy's terms
written out in NumPy; repeated rows for integer weights.
"""

from __future__ import annotations

import warnings

import numpy as np
import polars as pl
import pytest
import statsmodels.api as sm
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize, stats

import polaroc as pr
from polaroc.core.registry import METRICS, lookup

BEYOND = (
    "calibration_intercept",
    "calibration_slope",
    "spiegelhalter_z",
    "spiegelhalter_p",
    "reliability",
    "resolution",
    "uncertainty",
)


def logit(p: np.ndarray) -> np.ndarray:
    return np.log(p / (1 - p))


def glm_fits(p, y, w=None) -> tuple[float, float, float]:
    """statsmodels: (calibration in the large, recalibration intercept, slope).

    Rows scored 0 or 1 are left out, as rms::val.prob leaves them out.
    """
    keep = (p > 0) & (p < 1)
    p, y = p[keep], y[keep].astype(float)
    w = None if w is None else w[keep]
    x = logit(p)
    binomial = sm.families.Binomial()
    offset = sm.GLM(y, np.ones_like(x), family=binomial, offset=x, freq_weights=w)
    joint = sm.GLM(y, sm.add_constant(x), family=binomial, freq_weights=w)
    c = offset.fit(tol=1e-14, maxiter=500).params[0]
    a, b = joint.fit(tol=1e-14, maxiter=500).params
    return c, a, b


def spiegelhalter(p, y, w=None) -> tuple[float, float]:
    """Spiegelhalter (1986): z and its two-sided normal p, by hand."""
    w = np.ones_like(p) if w is None else w
    z = np.sum(w * (y - p) * (1 - 2 * p)) / np.sqrt(np.sum(w * (1 - 2 * p) ** 2 * p * (1 - p)))
    return z, 2 * stats.norm.sf(abs(z))


def murphy(p, y, n_bins=10, w=None) -> tuple[float, float, float, float]:
    """Murphy (1973) on scikit-learn's uniform bins: reliability, resolution, uncertainty,
    and the Brier score."""
    w = np.ones_like(p) if w is None else w
    bins = np.searchsorted(np.linspace(0, 1, n_bins + 1)[1:-1], p)
    total = np.bincount(bins, weights=w, minlength=n_bins)
    used = total > 0
    f = np.bincount(bins, weights=w * p, minlength=n_bins)[used] / total[used]
    o = np.bincount(bins, weights=w * y, minlength=n_bins)[used] / total[used]
    share = np.sum(w * y) / np.sum(w)
    wb = total[used] / total.sum()
    reliability = np.sum(wb * (f - o) ** 2)
    resolution = np.sum(wb * (o - share) ** 2)
    brier = np.sum(w * (p - y) ** 2) / np.sum(w)
    return reliability, resolution, share * (1 - share), brier


def simulated(rng: np.random.Generator, n: int = 300) -> pl.DataFrame:
    """Two models × three folds of miscalibrated probabilities (a slope and a shift)."""
    parts = []
    for model, (shift, slope) in {"a": (0.4, 0.7), "b": (-0.3, 1.6)}.items():
        for fold in range(3):
            p = rng.beta(2, 3, n)
            truth = 1 / (1 + np.exp(-(shift + slope * logit(p))))
            y = (rng.random(n) < truth).astype(np.int64)
            w = rng.integers(1, 4, n)
            frame = {"model": model, "fold": fold, "score": p, "label": y, "w": w}
            parts.append(pl.DataFrame(frame))
    return pl.concat(parts)


def group(df: pl.DataFrame, row: dict) -> tuple[np.ndarray, ...]:
    g = df.filter(pl.col("model") == row["model"], pl.col("fold") == row["fold"])
    return g["score"].to_numpy(), g["label"].to_numpy().astype(float), g["w"].to_numpy()


def test_intercept_and_slope_equal_statsmodels_glm(run, rng):
    df = simulated(rng)
    table = run(df, lambda f: pr.calibration(f))
    assert table.height == 6
    for row in table.iter_rows(named=True):
        p, y, _ = group(df, row)
        c, _, b = glm_fits(p, y)
        assert row["calibration_intercept"] == pytest.approx(c, rel=1e-9, abs=1e-12)
        assert row["calibration_slope"] == pytest.approx(b, rel=1e-9)
    # the simulated miscalibration shows: model a too extreme (slope < 1), b too timid
    slopes = table.group_by("model").agg(pl.col("calibration_slope").mean()).sort("model")
    assert slopes["calibration_slope"].to_list()[0] < 1 < slopes["calibration_slope"].to_list()[1]


def test_weighted_fits_equal_statsmodels_freq_weights_and_repeated_rows(run, rng):
    df = simulated(rng, n=120)
    weighted = run(df, lambda f: pr.calibration(f, weight="w"))
    repeated = df.select(pl.all().repeat_by("w").explode()).drop("w")
    plain = run(repeated, lambda f: pr.calibration(f)).sort("model", "fold")
    for row, other in zip(
        weighted.sort("model", "fold").iter_rows(named=True),
        plain.iter_rows(named=True),
        strict=True,
    ):
        p, y, w = group(df, row)
        c, _, b = glm_fits(p, y, w.astype(float))
        assert row["calibration_intercept"] == pytest.approx(c, rel=1e-9, abs=1e-12)
        assert row["calibration_slope"] == pytest.approx(b, rel=1e-9)
        z, pz = spiegelhalter(p, y, w)
        assert row["spiegelhalter_z"] == pytest.approx(z, rel=1e-12)
        assert row["spiegelhalter_p"] == pytest.approx(pz, rel=1e-9)
        for name in BEYOND:
            assert row[name] == pytest.approx(other[name], rel=1e-9, abs=1e-12)


def test_scores_of_zero_or_one_are_left_out_of_the_fits_only(run):
    rng = np.random.default_rng(3)
    p = np.r_[rng.uniform(0.05, 0.95, 200), 0.0, 0.0, 1.0, 1.0]
    y = np.r_[(rng.random(200) < p[:200]).astype(int), 0, 1, 1, 0]
    df = pl.DataFrame({"model": "m", "fold": 0, "score": p, "label": y})
    row = run(df, lambda f: pr.calibration(f)).row(0, named=True)
    c, _, b = glm_fits(p, y)
    assert row["calibration_intercept"] == pytest.approx(c, rel=1e-9)
    assert row["calibration_slope"] == pytest.approx(b, rel=1e-9)
    z, pz = spiegelhalter(p, y.astype(float))  # every row, 0 and 1 included
    assert row["spiegelhalter_z"] == pytest.approx(z, rel=1e-12)
    assert row["spiegelhalter_p"] == pytest.approx(pz, rel=1e-9)


def test_spiegelhalter_and_murphy_by_hand(run, rng):
    df = simulated(rng)
    table = run(df, lambda f: pr.calibration(f, n_bins=7))
    for row in table.iter_rows(named=True):
        p, y, _ = group(df, row)
        z, pz = spiegelhalter(p, y)
        assert row["spiegelhalter_z"] == pytest.approx(z, rel=1e-12)
        assert row["spiegelhalter_p"] == pytest.approx(pz, rel=1e-9)
        rel, res, unc, _ = murphy(p, y, n_bins=7)
        assert row["reliability"] == pytest.approx(rel, rel=1e-12)
        assert row["resolution"] == pytest.approx(res, rel=1e-12)
        assert row["uncertainty"] == pytest.approx(unc, rel=1e-12)


@settings(max_examples=30)
@given(
    values=st.lists(st.integers(0, 9), min_size=2, max_size=6, unique=True),
    picks=st.lists(st.tuples(st.integers(0, 5), st.booleans()), min_size=4, max_size=60),
)
def test_murphy_identity_when_scores_are_constant_within_bins(values, picks):
    """Brier = reliability − resolution + uncertainty when each bin holds one score."""
    scores = [0.05 + 0.1 * v for v in values]  # one score in each of the 10 uniform bins
    p = np.array([scores[i % len(scores)] for i, _ in picks])
    y = np.array([float(hit) for _, hit in picks])
    df = pl.DataFrame({"model": "m", "fold": 0, "score": p, "label": y.astype(int)})
    row = pr.calibration(df).collect().row(0, named=True)
    if y.min() == y.max():
        assert all(row[name] is None for name in BEYOND)
        return
    rel, res, unc, brier = murphy(p, y)
    assert row["brier"] == pytest.approx(brier, abs=1e-12)
    assert row["reliability"] == pytest.approx(rel, abs=1e-12)
    assert row["resolution"] == pytest.approx(res, abs=1e-12)
    assert row["uncertainty"] == pytest.approx(unc, abs=1e-12)
    identity = row["reliability"] - row["resolution"] + row["uncertainty"]
    assert identity == pytest.approx(row["brier"], abs=1e-12)


@settings(max_examples=40)
@given(
    n=st.integers(3, 40),
    spread=st.floats(0.5, 12.0),
    shift=st.floats(-4.0, 4.0),
    seed=st.integers(0, 2**32 - 1),
)
def test_the_fits_solve_their_likelihood_equations(n, spread, shift, seed):
    """Wherever the fits exist: calibration in the large is the root of its score equation
    (brentq on Σ (y − σ(c + x)) = 0, which holds where statsmodels' IRLS diverges), and the
    slope is null exactly when the logits separate the classes."""
    rng = np.random.default_rng(seed)
    x = rng.normal(0, spread, n)
    p = np.clip(1 / (1 + np.exp(-x)), 1e-15, 1 - 1e-15)
    y = (rng.random(n) < 1 / (1 + np.exp(-(shift + x)))).astype(float)
    df = pl.DataFrame({"model": "m", "fold": 0, "score": p, "label": y.astype(int)})
    row = pr.calibration(df).collect().row(0, named=True)
    if y.min() == y.max():
        assert row["calibration_intercept"] is None
        assert row["calibration_slope"] is None
        return
    x = logit(p)

    def score(c: float) -> float:
        return float(np.sum(y - 1 / (1 + np.exp(-(c + x)))))

    root = optimize.brentq(score, -80, 80, xtol=1e-14, rtol=1e-14)
    assert row["calibration_intercept"] == pytest.approx(root, rel=1e-9, abs=1e-9)
    separated = x[y == 0].max() <= x[y == 1].min() or x[y == 1].max() <= x[y == 0].min()
    assert (row["calibration_slope"] is None) == separated
    if not separated:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _, _, b = glm_fits(p, y)
        assert row["calibration_slope"] == pytest.approx(b, rel=1e-7, abs=1e-7)


def test_degenerate_groups_are_null_and_nan_is_nan(run):
    rows = {
        "one_class": ([0.2, 0.4, 0.7], [1, 1, 1]),
        "separated": ([0.1, 0.2, 0.6, 0.9], [0, 0, 1, 1]),
        "constant": ([0.3, 0.3, 0.3, 0.3], [0, 1, 0, 1]),
        "certain": ([0.0, 1.0, 0.0, 1.0], [0, 1, 1, 0]),
        "nan": ([0.2, float("nan"), 0.7, 0.4], [0, 1, 1, 0]),
    }
    df = pl.concat(
        pl.DataFrame({"model": name, "fold": 0, "score": s, "label": y})
        for name, (s, y) in rows.items()
    )
    table = {r["model"]: r for r in run(df, lambda f: pr.calibration(f)).iter_rows(named=True)}
    assert all(table["one_class"][name] is None for name in BEYOND)
    separated = table["separated"]
    assert separated["calibration_slope"] is None  # the likelihood has no maximum
    with warnings.catch_warnings():  # the joint fit is separated; the offset fit is not
        warnings.simplefilter("ignore")
        c, _, _ = glm_fits(np.array(rows["separated"][0]), np.array(rows["separated"][1]))
    assert separated["calibration_intercept"] == pytest.approx(c, rel=1e-9)
    constant = table["constant"]
    assert constant["calibration_slope"] is None
    assert constant["calibration_intercept"] == pytest.approx(logit(0.5) - logit(0.3))
    certain = table["certain"]  # no score strictly inside (0, 1); z's denominator is 0
    for name in ("calibration_intercept", "calibration_slope", "spiegelhalter_z"):
        assert certain[name] is None
    assert certain["reliability"] == pytest.approx(0.25)  # both bins: (½ − 0)², (½ − 1)²
    assert certain["resolution"] == 0.0
    assert certain["brier"] == pytest.approx(0.25 - 0.0 + certain["uncertainty"])
    assert all(np.isnan(table["nan"][name]) for name in BEYOND)


def test_multiclass_groups_are_null(run):
    rng = np.random.default_rng(5)
    n = 40
    p = rng.dirichlet(np.ones(3), n)
    y = rng.integers(0, 3, n)
    log = pl.DataFrame(
        {
            "model": "m",
            "fold": 0,
            "sample": np.repeat(np.arange(n), 3),
            "class": np.tile(np.arange(3), n),
            "score": p.ravel(),
            "label": np.repeat(y, 3),
        }
    )
    row = run(log, lambda f: pr.calibration(f)).row(0, named=True)
    assert row["n_classes"] == 3
    assert row["ece"] is not None
    assert all(row[name] is None for name in BEYOND)


def test_both_classes_rows_equal_positive_rows_and_columns_can_be_renamed(run, rng):
    df = simulated(rng, n=80).drop("w")
    both = pl.concat(
        [
            df.with_columns(cls=pl.lit(1, pl.Int64)),
            df.with_columns(cls=pl.lit(0, pl.Int64), score=1 - pl.col("score")),
        ]
    ).rename({"model": "clf", "fold": "part", "score": "prob", "label": "truth"})
    renamed = run(
        both,
        lambda f: pr.calibration(
            f, model="clf", fold="part", class_="cls", score="prob", label="truth"
        ),
    ).sort("clf", "part")
    plain = run(df, lambda f: pr.calibration(f)).sort("model", "fold")
    assert renamed.columns[:2] == ["clf", "part"]
    for name in BEYOND:
        assert renamed[name].to_list() == pytest.approx(plain[name].to_list(), rel=1e-12)


def test_scores_outside_zero_one_raise_naming_the_column(mode):
    df = pl.DataFrame({"model": "m", "fold": 0, "p": [0.2, 1.3, 0.5], "label": [0, 1, 1]})
    frame = df if mode == "eager" else df.lazy()
    with pytest.raises(ValueError, match="'p'"):
        pr.calibration(frame, score="p").collect(engine="auto" if mode == "eager" else mode)


def test_the_registry_ranks_the_new_columns_but_not_uncertainty():
    assert lookup("calibration_slope").direction == "target"
    assert lookup("calibration_slope").target == 1.0
    assert lookup("calibration_intercept").target == 0.0
    assert lookup("spiegelhalter_z").target == 0.0
    assert lookup("reliability").direction == "lower"
    assert lookup("resolution").direction == "higher"
    assert "uncertainty" not in METRICS  # a property of the samples, not of a model
    with pytest.raises(ValueError, match="not in polaroc's registry"):
        lookup("uncertainty")
