"""Wu & Flach's model-selection protocol against a direct re-implementation."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from polars.exceptions import ComputeError
from polars.testing import assert_frame_equal
from scipy import stats
from sklearn.metrics import roc_auc_score

import polaroc as pr
from tests.oracles import pair_sauc_parts
from tests.tables import sklearn_selection_log


def oracle(log: pl.DataFrame) -> dict[tuple[int, str], tuple[str, float, float]]:
    """(fold, rule) → (first tied model, best validation value, mean test AUC of the tied), by loops."""
    out = {}
    for (fold,), part in log.partition_by("fold", as_dict=True).items():
        scores = {}
        for (model,), rows in (
            part.filter(split="validation").partition_by("model", as_dict=True).items()
        ):
            y, s = rows["label"].to_numpy(), rows["score"].to_numpy()
            scores[model] = {"auc": roc_auc_score(y, s), "sauc": pair_sauc_parts(s, y)["sauc"]}
        for rule in ("auc", "sauc"):
            top = max(round(v[rule], 12) for v in scores.values())
            tied = sorted(m for m in scores if round(scores[m][rule], 12) == top)
            tests = [part.filter(split="test", model=m) for m in tied]
            out[fold, rule] = (
                tied[0],
                scores[tied[0]][rule],
                np.mean([roc_auc_score(t["label"], t["score"]) for t in tests]),
            )
    return out


def as_dict(out: pl.DataFrame) -> dict:
    return {
        (r["fold"], r["rule"]): (r["model"], r["validation_value"], r["test_auc"])
        for r in out.iter_rows(named=True)
    }


def test_protocol_matches_a_direct_implementation(run):
    log = sklearn_selection_log()
    out = run(log, lambda f: pr.select_models(f))
    assert out.columns == ["fold", "rule", "model", "n_tied", "validation_value", "test_auc"]
    assert out.height == 20
    expected = oracle(log)
    for key, (model, value, test_auc) in as_dict(out).items():
        assert model == expected[key][0]
        assert value == pytest.approx(expected[key][1], abs=1e-12)
        assert test_auc == pytest.approx(expected[key][2], abs=1e-12)


def test_paired_t_between_the_rules_matches_ttest_rel(run):
    log = sklearn_selection_log()
    out = run(log, lambda f: pr.paired_ttest(pr.select_models(f), "test_auc", model="rule"))
    chosen = pr.select_models(log).collect().sort("fold")
    by_auc = chosen.filter(rule="auc")["test_auc"].to_numpy()
    by_sauc = chosen.filter(rule="sauc")["test_auc"].to_numpy()
    row = out.row(0, named=True)
    assert (row["model_a"], row["model_b"]) == ("auc", "sauc")
    if np.allclose(by_auc, by_sauc):
        assert row["statistic"] is None
    else:
        ref = stats.ttest_rel(by_auc, by_sauc)
        assert row["statistic"] == pytest.approx(ref.statistic, rel=1e-10)
        assert row["p_value"] == pytest.approx(ref.pvalue, rel=1e-9)


def test_datasets_are_kept_apart(run):
    log = pl.concat(
        [sklearn_selection_log(s, rounds=5).with_columns(dataset=pl.lit(f"s{s}")) for s in (0, 1)]
    )
    out = run(log, lambda f: pr.select_models(f))
    assert out.columns[0] == "dataset"
    for (d,), part in out.partition_by("dataset", as_dict=True).items():
        expected = oracle(log.filter(dataset=d))
        got = as_dict(part)
        assert {k: v[0] for k, v in got.items()} == {k: v[0] for k, v in expected.items()}


def tiny_log() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "fold": [0] * 16,
            "split": (["validation"] * 4 + ["test"] * 4) * 2,
            "model": ["b"] * 8 + ["a"] * 8,
            "score": [0.9, 0.1, 0.8, 0.2, 0.6, 0.4, 0.7, 0.3] * 2,
            "label": [True, False, True, False, True, False, False, True] * 2,
        }
    )


def test_ties_go_to_the_smallest_model_id(run):
    out = run(tiny_log(), lambda f: pr.select_models(f, ties="first"))
    assert out["model"].to_list() == ["a", "a"]
    assert out["n_tied"].to_list() == [2, 2]


def test_tied_models_report_their_mean_test_auc(run):
    # a and b tie on validation (same scores) but differ on test.
    log = tiny_log().with_columns(
        score=pl.when((pl.col("model") == "b") & (pl.col("split") == "test"))
        .then(1 - pl.col("score"))
        .otherwise("score")
    )
    out = run(log, lambda f: pr.select_models(f))
    test = log.filter(pl.col("split") == "test")
    per_model = {
        m: roc_auc_score(part["label"], part["score"])
        for (m,), part in test.partition_by("model", as_dict=True).items()
    }
    assert out["n_tied"].to_list() == [2, 2]
    for value in out["test_auc"]:
        assert value == pytest.approx((per_model["a"] + per_model["b"]) / 2)
    first = run(log, lambda f: pr.select_models(f, ties="first"))
    assert first["test_auc"].to_list() == pytest.approx([per_model["a"]] * 2)


def test_degenerate_and_nan_validation_parts(run):
    log = pl.concat([tiny_log(), tiny_log().with_columns(fold=pl.lit(1, pl.Int64))])
    log = log.with_columns(
        label=pl.when((pl.col("fold") == 0) & (pl.col("split") == "validation"))
        .then(True)
        .otherwise("label")
    )
    out = run(log, lambda f: pr.select_models(f)).sort("fold", "rule")
    assert out.filter(fold=0)["model"].to_list() == [None, None]  # no negatives: no choice
    assert out.filter(fold=0)["test_auc"].to_list() == [None, None]
    assert out.filter(fold=1)["model"].to_list() == ["a", "a"]
    nan = log.with_columns(
        score=pl.when(
            (pl.col("fold") == 1) & (pl.col("model") == "b") & (pl.col("split") == "validation")
        )
        .then(pl.col("score") * float("nan"))
        .otherwise("score")
    )
    out = run(nan, lambda f: pr.select_models(f)).filter(fold=1)
    assert out["model"].to_list() == [None, None]
    assert all(math.isnan(v) for v in out["test_auc"])


def test_both_class_rows_are_read_through_the_positive_class(run):
    log = tiny_log().with_columns(pl.col("label").cast(pl.Int64))
    both = pl.concat(
        [
            log.with_columns(**{"class": pl.lit(1, pl.Int64)}),
            log.with_columns(**{"class": pl.lit(0, pl.Int64)}, score=1 - pl.col("score")),
        ]
    )
    out = run(both, lambda f: pr.select_models(f, positive_class=1))
    assert out["validation_value"].to_list() == pytest.approx([1.0, 0.7])  # AUC, sAUC
    assert out["class"].to_list() == [1, 1]  # the class read, stated
    # by default a two-class log is read through its larger class
    assert_frame_equal(run(both, lambda f: pr.select_models(f)), out)
    three = pl.concat([both, log.with_columns(**{"class": pl.lit(2, pl.Int64)})])
    with pytest.raises(ValueError, match="more than two classes"):
        pr.select_models(three)


def test_missing_test_part_is_named():
    log = tiny_log().filter(~((pl.col("model") == "b") & (pl.col("split") == "test")))
    with pytest.raises(ValueError, match=r"missing \(fold, model, split\) rows: \(0, b, test\)"):
        pr.select_models(log)
    with pytest.raises(ComputeError, match=r"\(0, b, test\)"):
        pr.select_models(log.lazy()).collect()


def test_unknown_split_labels_are_reported():
    with pytest.raises(ValueError, match="no rows with split == 'valid'"):
        pr.select_models(tiny_log(), validation="valid")


def test_schema_errors_at_call_time():
    with pytest.raises(ValueError, match="'split'"):
        pr.select_models(tiny_log().lazy().drop("split"))
    with pytest.raises(ValueError, match="needs a 'class' column"):
        pr.select_models(tiny_log(), positive_class=1)
