"""pr.power_auc and pr.power_auc_test against pROC's power.roc.test (fixtures, no R needed)."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from scipy import stats

import polaroc as pr
from tests.proc.fixtures import infb, infb_csv

ARGS = {"auc": "auc", "ncases": "n_cases", "ncontrols": "n_controls", "power": "power"}
ARGS |= {"kappa": "kappa", "sig.level": "alpha"}
SIDES = {"two.sided": "two-sided", "one.sided": "one-sided"}


def one_curve_args(given: dict) -> dict:
    args = {ARGS[k]: v for k, v in given.items() if k != "alternative"}
    if "alternative" in given:
        args["alternative"] = SIDES[given["alternative"]]
    return args


@pytest.mark.parametrize(
    "case", infb()["power_one"], ids=lambda c: f"{c['solve']}-{sorted(c['given'])}"
)
def test_one_curve_equals_proc(case):
    out = pr.power_auc(**one_curve_args(case["given"]))
    assert out.columns == ["auc", "n_cases", "n_controls", "alpha", "power"]
    assert out.dtypes == [pl.Float64] * 5
    row = out.row(0, named=True)
    for name in ("n_cases", "n_controls", "alpha", "power"):
        assert row[name] == pytest.approx(case[name], rel=1e-9), name
    if case["solve"] == "auc":
        # pROC's uniroot stops near 1e-4; the same equation solved tightly in R
        assert row["auc"] == pytest.approx(case["auc_tight"], abs=1e-9)
        assert row["auc"] == pytest.approx(case["auc"], abs=1e-3)
    else:
        assert row["auc"] == pytest.approx(case["auc"], abs=1e-12)


def test_one_curve_round_trips_and_matches_the_paper_formula():
    n = pr.power_auc(auc=0.72, power=0.85, kappa=1.5)
    back = pr.power_auc(auc=0.72, n_cases=n["n_cases"].item(), kappa=1.5)
    assert back["power"].item() == pytest.approx(0.85, abs=1e-12)
    auc = pr.power_auc(n_cases=n["n_cases"].item(), kappa=1.5, power=0.85)["auc"].item()
    assert auc == pytest.approx(0.72, abs=1e-10)
    alpha = pr.power_auc(auc=0.72, n_cases=n["n_cases"].item(), kappa=1.5, power=0.85, alpha=None)
    assert alpha["alpha"].item() == pytest.approx(0.05, abs=1e-12)
    # Obuchowski et al. (2004): n = (z_a sqrt(V0) + z_b sqrt(V))^2 / (theta - 0.5)^2
    a = stats.norm.ppf(0.72) * 1.414
    v = 0.0099 * math.exp(-a * a / 2) * ((5 * a * a + 8) + (a * a + 8) / 1.5)
    v0 = 0.0792 * (1 + 1 / 1.5)
    z_a, z_b = stats.norm.ppf(0.975), stats.norm.ppf(0.85)
    assert n["n_cases"].item() == pytest.approx(
        (z_a * math.sqrt(v0) + z_b * math.sqrt(v)) ** 2 / 0.22**2, rel=1e-12
    )
    assert n["n_controls"].item() == pytest.approx(1.5 * n["n_cases"].item(), rel=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_cases": 20}, "exactly one"),
        ({"auc": 0.8}, "exactly one"),
        ({"auc": 0.8, "n_cases": 20, "power": 0.9}, "exactly one"),
        ({"auc": 1.2, "n_cases": 20}, "auc must lie"),
        ({"auc": 0.8, "n_cases": -3}, "n_cases must be positive"),
        ({"auc": 0.8, "n_cases": 20, "alternative": "greater"}, "alternative"),
        ({"n_cases": 1, "power": 0.99, "alpha": 0.001}, "no AUC in"),  # pROC: uniroot fails
    ],
)
def test_one_curve_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        pr.power_auc(**kwargs)


def pilot_log() -> pl.DataFrame:
    data = infb_csv("infb_pilot")
    return pl.concat(
        [
            data.select(
                "dataset",
                "sample",
                model=pl.lit(name),
                fold=pl.lit(0),
                score=f"score_{name}",
                label=pl.col("label") == 1,
            )
            for name in ("a", "b")
        ]
    )


@pytest.mark.parametrize("method", ["delong", "obuchowski"])
@pytest.mark.parametrize("alternative", ["two.sided", "one.sided"])
def test_two_curves_equal_proc(run, method, alternative):
    cases = [
        c for c in infb()["power_two"] if c["method"] == method and c["alternative"] == alternative
    ]
    log = pilot_log()
    kwargs = {"method": method, "alternative": SIDES[alternative], "by": "dataset"}
    power = run(log, lambda f: pr.power_auc_test(f, "a", "b", **kwargs))
    n = run(log, lambda f: pr.power_auc_test(f, "a", "b", power=0.8, **kwargs))
    nk = run(log, lambda f: pr.power_auc_test(f, "a", "b", power=0.9, kappa=2.0, **kwargs))
    alpha = run(log, lambda f: pr.power_auc_test(f, "a", "b", power=0.8, alpha=None, **kwargs))
    assert power.columns == [
        "dataset",
        "model_a",
        "model_b",
        "auc_a",
        "auc_b",
        "n_cases",
        "n_controls",
        "alpha",
        "power",
    ]
    for i, case in enumerate(sorted(cases, key=lambda c: c["dataset"])):
        assert power["dataset"][i] == case["dataset"]
        assert power["auc_a"][i] == pytest.approx(case["auc_a"], abs=1e-12)
        assert power["auc_b"][i] == pytest.approx(case["auc_b"], abs=1e-12)
        assert power["n_cases"][i] == case["pilot_cases"]
        assert power["n_controls"][i] == case["pilot_controls"]
        assert power["power"][i] == pytest.approx(case["power"], rel=1e-9)
        assert n["n_cases"][i] == pytest.approx(case["n_cases_power_0.8"], rel=1e-9)
        assert n["n_controls"][i] == pytest.approx(case["n_controls_power_0.8"], rel=1e-9)
        assert nk["n_cases"][i] == pytest.approx(case["n_cases_power_0.9_kappa_2"], rel=1e-9)
        assert nk["n_controls"][i] == pytest.approx(case["n_controls_power_0.9_kappa_2"], rel=1e-9)
        assert alpha["alpha"][i] == pytest.approx(case["alpha_power_0.8"], rel=1e-9)


def test_two_curves_planned_size_and_awkward_pilots(run):
    log = pilot_log().filter(dataset="pilot1")
    at_pilot = pr.power_auc_test(log, "a", "b").collect()
    n = at_pilot["n_cases"].item()
    again = pr.power_auc_test(log, "a", "b", n_cases=n).collect()
    assert again["power"].item() == pytest.approx(at_pilot["power"].item(), rel=1e-12)
    needed = pr.power_auc_test(log, "a", "b", power=0.8).collect()["n_cases"].item()
    planned = pr.power_auc_test(log, "a", "b", n_cases=needed).collect()
    assert planned["power"].item() == pytest.approx(0.8, abs=1e-10)
    # a NaN score makes the results NaN; a renamed log gives the same numbers
    nan = log.with_columns(
        score=pl.when((pl.col("sample") == 3) & (pl.col("model") == "a"))
        .then(float("nan"))
        .otherwise("score")
    )
    assert math.isnan(run(nan, lambda f: pr.power_auc_test(f, "a", "b"))["power"].item())
    renamed = log.rename({"score": "s", "model": "clf", "sample": "id"})
    out = run(
        renamed, lambda f: pr.power_auc_test(f, "a", "b", score="s", model="clf", sample="id")
    )
    assert out["power"].item() == pytest.approx(at_pilot["power"].item(), rel=1e-12)
    for kwargs, match in (
        ({"power": None, "alpha": None}, "give the other two"),
        ({"power": 0.8, "n_cases": 50}, "drop n_cases"),
        ({"method": "bootstrap"}, "method"),
        ({"alternative": "less"}, "alternative"),
    ):
        with pytest.raises(ValueError, match=match):
            pr.power_auc_test(log, "a", "b", **kwargs)
    # the log's errors name the function called, never the test it reads the pilot with
    with pytest.raises(ValueError, match="power_auc_test cannot pair") as raised:
        pr.power_auc_test(
            log.filter(~((pl.col("model") == "b") & (pl.col("sample") == 0))), "a", "b"
        )
    assert "delong_test" not in str(raised.value)
    with pytest.raises(ValueError, match="power_auc_test compares two different models"):
        pr.power_auc_test(log, "a", "a")
    with pytest.raises(TypeError, match=r"power_auc_test\(\) got an unexpected keyword"):
        pr.power_auc_test(log, "a", "b", scores="score")


def test_two_curves_on_the_demo_log_with_a_class_column():
    log = pl.read_parquet(pr.demo_log_path())
    out = pr.power_auc_test(log, "forest", "lda", positive_class="malignant").collect()
    delong = pr.delong_test(log, "forest", "lda", positive_class="malignant").collect()
    binary = log.filter(pl.col("class") == "malignant")
    cases = binary.filter(model="forest")["label"].cast(pl.String).eq("malignant").sum()
    assert out["n_cases"].item() == cases
    assert out["n_controls"].item() == binary.filter(model="forest").height - cases
    var_a, var_b, cov = (delong[c].item() for c in ("var_a", "var_b", "cov"))
    delta = abs(delong["auc_a"].item() - delong["auc_b"].item())
    z_a = stats.norm.ppf(0.975)
    z = (delta - z_a * np.sqrt(2 * var_a - 2 * cov)) / np.sqrt(var_a + var_b - 2 * cov)
    assert out["power"].item() == pytest.approx(stats.norm.cdf(z), rel=1e-9)
