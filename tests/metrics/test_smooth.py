"""pr.smooth_roc against pROC's smooth(method="binormal") and an independent least-squares fit."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy import special, stats
from sklearn.metrics import roc_curve as sk_roc_curve

import polaroc as pr
from tests.proc.fixtures import infb, infb_csv


def binary_log(data: pl.DataFrame) -> pl.DataFrame:
    return data.with_columns(model=pl.lit("m"), fold=pl.lit(0), label=pl.col("label") == 1)


def numpy_fit(score: np.ndarray, label: np.ndarray) -> tuple[float, float]:
    """pROC's fit by another route: scikit-learn's points, numpy's least squares."""
    fpr, tpr, _ = sk_roc_curve(label, score, drop_intermediate=False)
    x, y = special.ndtri(tpr), special.ndtri(1 - fpr)
    keep = np.isfinite(x) & np.isfinite(y)
    slope, intercept = np.polyfit(x[keep], y[keep], 1)
    return float(intercept), float(slope)


@pytest.mark.parametrize("case", infb()["smooth"], ids=lambda c: f"{c['dataset']}-{c['n']}")
def test_equals_proc_binormal_smooth(run, case):
    data = binary_log(infb_csv("infb_smooth").filter(dataset=case["dataset"]))
    out = run(data, lambda f: pr.smooth_roc(f, n=case["n"]))
    assert out.columns == ["dataset", "model", "fold", "fpr", "tpr", "auc"]
    assert out.height == case["n"] + 2
    np.testing.assert_allclose(out["fpr"], case["fpr"], rtol=0, atol=1e-9)
    np.testing.assert_allclose(out["tpr"], case["tpr"], rtol=0, atol=1e-9)
    assert (out["auc"] - case["auc"]).abs().max() < 1e-9
    a, b = numpy_fit(data["score"].to_numpy(), data["label"].to_numpy())
    assert a == pytest.approx(case["intercept"], abs=1e-9)
    assert b == pytest.approx(case["slope"], abs=1e-9)


def test_groups_by_and_per_class_curves(run):
    data = infb_csv("infb_smooth").filter(pl.col("dataset") != "docstring")
    log = binary_log(data)
    out = run(log, lambda f: pr.smooth_roc(f, by="dataset", n=64))
    expected = {c["dataset"]: c for c in infb()["smooth"] if c["n"] == 20}
    del expected["docstring"]
    assert out["dataset"].unique().sort().to_list() == sorted(expected)
    for name, group in out.group_by("dataset"):
        part = log.filter(dataset=name[0])
        a, b = numpy_fit(part["score"].to_numpy(), part["label"].to_numpy())
        auc = stats.norm.cdf(a / np.sqrt(1 + b * b))
        assert group.height == 66
        assert group["auc"].unique().to_list() == [pytest.approx(auc, abs=1e-12)]
        assert group["auc"][0] == pytest.approx(expected[name[0]]["auc"], abs=1e-9)
    # both classes' rows: one one-vs-rest curve per class, the class-1 one equals the binary
    both = pl.concat(
        [
            log.with_columns(**{"class": pl.lit(1)}, label=pl.col("label").cast(pl.Int32)),
            log.with_columns(
                **{"class": pl.lit(0)}, label=pl.col("label").cast(pl.Int32), score=-pl.col("score")
            ),
        ]
    )
    per_class = run(both, lambda f: pr.smooth_roc(f, by="dataset", n=64))
    assert per_class.columns == ["dataset", "class", "fpr", "tpr", "auc"]
    ones = per_class.filter(pl.col("class") == 1).drop("class")
    assert ones.equals(out)


def test_demo_log_shape_matches_the_oracle_per_class(run):
    log = pl.read_parquet(pr.demo_log_path())
    out = run(log, lambda f: pr.smooth_roc(f, n=16))
    assert out.columns == ["model", "fold", "class", "fpr", "tpr", "auc"]
    for (m, fold, cls), group in out.group_by("model", "fold", "class"):
        rows = log.filter(model=m, fold=fold).filter(pl.col("class") == cls)
        label = (rows["label"].cast(pl.String) == rows["class"].cast(pl.String)).to_numpy()
        fpr, tpr, _ = sk_roc_curve(label, rows["score"].to_numpy(), drop_intermediate=False)
        finite = np.isfinite(special.ndtri(tpr)) & np.isfinite(special.ndtri(1 - fpr))
        if finite.sum() < 2 or np.ptp(tpr[finite]) == 0:
            assert group.height == 1
            assert group["auc"].is_null().all()
            continue
        a, b = numpy_fit(rows["score"].to_numpy(), label)
        assert group.height == 18
        assert group["auc"][0] == pytest.approx(stats.norm.cdf(a / np.sqrt(1 + b * b)), abs=1e-9)


def test_rank_invariant_and_renamed_columns(run):
    data = binary_log(infb_csv("infb_smooth").filter(dataset="normal"))
    out = pr.smooth_roc(data, n=32).collect()
    moved = data.with_columns(pl.col("score").exp() * 3 - 1).rename(
        {"score": "s", "label": "y", "model": "clf", "fold": "k"}
    )
    renamed = run(
        moved, lambda f: pr.smooth_roc(f, n=32, score="s", label="y", model="clf", fold="k")
    )
    assert renamed.columns == ["dataset", "clf", "k", "fpr", "tpr", "auc"]
    np.testing.assert_allclose(renamed["fpr"], out["fpr"], atol=1e-12)
    assert renamed["auc"][0] == pytest.approx(out["auc"][0], abs=1e-12)


def test_awkward_groups(run):
    data = binary_log(infb_csv("infb_smooth").filter(dataset="normal")).drop("dataset")
    nan = data.with_columns(
        model=pl.lit("nan"),
        score=pl.when(pl.int_range(pl.len()) == 0).then(float("nan")).otherwise("score"),
    )
    one_class = data.with_columns(model=pl.lit("one"), label=pl.lit(True))
    few = data.head(3).with_columns(model=pl.lit("few"))  # < 2 usable points: not smoothable
    nulls = data.with_columns(
        model=pl.lit("nulls"),
        score=pl.when(pl.int_range(pl.len()) % 5 == 0).then(None).otherwise("score"),
    )
    log = pl.concat([data, nan, one_class, few, nulls])
    out = run(log, lambda f: pr.smooth_roc(f, n=8))
    rows = {m: g for (m,), g in out.group_by("model")}
    assert rows["m"].height == 10
    assert rows["nan"].height == 1
    assert np.isnan(rows["nan"]["auc"][0])
    assert np.isnan(rows["nan"]["fpr"][0])
    for name in ("one", "few"):
        assert rows[name].height == 1
        assert rows[name].select(pl.all().is_null().all()).drop("model", "fold").row(0) == (
            True,
            True,
            True,
        )
    kept = data.filter(pl.int_range(pl.len()) % 5 != 0)
    a, b = numpy_fit(kept["score"].to_numpy(), kept["label"].to_numpy())
    assert rows["nulls"]["auc"][0] == pytest.approx(stats.norm.cdf(a / np.hypot(1, b)), abs=1e-12)


def test_unit_weights_change_nothing_and_bad_arguments_raise():
    data = binary_log(infb_csv("infb_smooth").filter(dataset="tied"))
    plain = pr.smooth_roc(data, n=16).collect()
    weighted = pr.smooth_roc(data.with_columns(w=pl.lit(1.0)), n=16, weight="w").collect()
    np.testing.assert_allclose(weighted["fpr"], plain["fpr"], atol=1e-12)
    with pytest.raises(ValueError, match="method='logcondens' is not available"):
        pr.smooth_roc(data, method="logcondens")
    with pytest.raises(ValueError, match="no weight"):
        pr.smooth_roc(data, method="density", weight="w")
    with pytest.raises(ValueError, match="at least 2"):
        pr.smooth_roc(data, n=1)


@pytest.mark.parametrize("case", infb()["smooth_density"], ids=lambda c: f"{c['dataset']}-{c['n']}")
def test_density_equals_proc(run, case):
    data = binary_log(infb_csv("infb_smooth").filter(dataset=case["dataset"]))
    out = run(data, lambda f: pr.smooth_roc(f, method="density", n=case["n"]))
    assert out.columns == ["dataset", "model", "fold", "fpr", "tpr", "auc"]
    assert out.height == case["n"] + 2
    np.testing.assert_allclose(out["fpr"], case["fpr"], rtol=0, atol=1e-9)
    np.testing.assert_allclose(out["tpr"], case["tpr"], rtol=0, atol=1e-9)
    assert (out["auc"] - case["auc"]).abs().max() < 1e-9


def test_density_groups_and_awkward_groups(run):
    data = binary_log(infb_csv("infb_smooth").filter(pl.col("dataset") != "docstring"))
    out = run(data, lambda f: pr.smooth_roc(f, by="dataset", method="density", n=20))
    expected = {c["dataset"]: c["auc"] for c in infb()["smooth_density"] if c["n"] == 20}
    for (name,), group in out.group_by("dataset"):
        assert group.height == 22
        assert group["auc"][0] == pytest.approx(expected[name], abs=1e-9)
    base = data.filter(dataset="normal").drop("dataset")
    nan = base.with_columns(
        model=pl.lit("nan"),
        score=pl.when(pl.int_range(pl.len()) == 0).then(float("nan")).otherwise("score"),
    )
    one_class = base.with_columns(model=pl.lit("one"), label=pl.lit(True))
    out = run(pl.concat([base, nan, one_class]), lambda f: pr.smooth_roc(f, method="density", n=8))
    rows = {m: g for (m,), g in out.group_by("model")}
    assert rows["m"].height == 10
    assert rows["nan"].height == 1
    assert np.isnan(rows["nan"]["auc"][0])
    assert rows["one"].height == 1
    assert rows["one"]["auc"][0] is None
