"""cross_validate_log: the logged scores are scikit-learn's out-of-fold scores, row for row,
in one k-fold split or in every repeat of an r × k or 5 × 2 design."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import (
    PredefinedSplit,
    RepeatedStratifiedKFold,
    StratifiedKFold,
    cross_val_predict,
)
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

import polaroc as pr


@pytest.fixture(scope="module")
def iris():
    return load_iris()


@pytest.fixture(scope="module")
def cancer():
    data = load_breast_cancer()
    rows = np.random.default_rng(7).choice(len(data.target), 200, replace=False)
    return data.data[rows], data.target[rows]


def models():
    return {
        "logistic": make_pipeline(StandardScaler(), LogisticRegression(max_iter=500)),
        "nb": GaussianNB(),
    }


def wide(log: pl.DataFrame, model: str) -> np.ndarray:
    """One model's scores as the (n_samples, n_classes) matrix scikit-learn returns."""
    one = log.filter(pl.col("model") == model).sort("sample", "class")
    n_classes = one["class"].n_unique()
    return one["score"].to_numpy().reshape(-1, n_classes)


def test_scores_equal_cross_val_predict(iris):
    splitter = StratifiedKFold(4, shuffle=True, random_state=11)
    log = pr.cross_validate_log(models(), iris.data, iris.target, cv=splitter)
    assert log.columns == ["model", "fold", "sample", "class", "score", "label"]
    assert log.height == 2 * 150 * 3
    for name, estimator in models().items():
        expected = cross_val_predict(
            estimator, iris.data, iris.target, cv=splitter, method="predict_proba"
        )
        np.testing.assert_allclose(wide(log, name), expected, rtol=1e-12, atol=1e-12)
    # fold ids and labels are the splitter's test parts and the true labels
    for fold, (_, test) in enumerate(splitter.split(iris.data, iris.target)):
        rows = log.filter(pl.col("fold") == fold, pl.col("model") == "nb")
        assert sorted(rows["sample"].unique().to_list()) == sorted(test.tolist())
    labels = log.select("sample", "label").unique().sort("sample")
    np.testing.assert_array_equal(labels["label"].to_numpy(), iris.target)


def test_int_cv_is_seeded_stratified_kfold(iris):
    by_int = pr.cross_validate_log(models(), iris.data, iris.target, cv=5, seed=3)
    splitter = StratifiedKFold(5, shuffle=True, random_state=3)
    by_splitter = pr.cross_validate_log(models(), iris.data, iris.target, cv=splitter)
    assert by_int.equals(by_splitter)
    other_seed = pr.cross_validate_log(models(), iris.data, iris.target, cv=5, seed=4)
    folds = lambda log: log.select("sample", "fold").unique().sort("sample")["fold"]
    assert not folds(by_int).equals(folds(other_seed))


def test_folds_from_stratified_folds_via_predefined_split(iris):
    assigned = pl.DataFrame({"label": iris.target}).select(pr.stratified_folds("label", k=5))
    folds = assigned["fold"].to_numpy()
    log = pr.cross_validate_log(
        {"nb": GaussianNB()}, iris.data, iris.target, cv=PredefinedSplit(folds)
    )
    got = log.select("sample", "fold").unique().sort("sample")
    np.testing.assert_array_equal(got["fold"].to_numpy(), folds)


def test_binary_decision_function_logs_the_positive_class_only(cancer):
    x, y = cancer
    svm = {"svm": make_pipeline(StandardScaler(), LinearSVC())}
    splitter = StratifiedKFold(3, shuffle=True, random_state=0)
    log = pr.cross_validate_log(svm, x, y, cv=splitter, method="decision_function")
    assert log.height == len(y)
    assert log["class"].unique().to_list() == [1]
    expected = cross_val_predict(svm["svm"], x, y, cv=splitter, method="decision_function")
    np.testing.assert_allclose(log.sort("sample")["score"].to_numpy(), expected, rtol=1e-12)


def test_log_aucs_equal_roc_auc_score_per_fold(cancer, tmp_path):
    # the log holds both classes' rows, so the contract's AUC is [A(0|1) + A(1|0)]/2:
    # the two directions differ where probabilities saturate to 0 or 1 in floating point
    x, y = cancer
    log = pr.cross_validate_log(models(), x, y, cv=4, seed=2)
    log.write_parquet(tmp_path / "log.parquet")
    table = pr.evaluate(pr.scan_logs(tmp_path / "log.parquet")).collect()
    assert table.height == 8
    for row in table.iter_rows(named=True):
        part = log.filter(pl.col("model") == row["model"], pl.col("fold") == row["fold"])
        directions = [
            roc_auc_score((one["label"] == cls).to_numpy(), one["score"].to_numpy())
            for cls in (0, 1)
            for one in [part.filter(pl.col("class") == cls)]
        ]
        assert row["auc"] == pytest.approx(np.mean(directions), abs=1e-12)


def test_pairs_dataset_and_class_names(iris):
    rng = np.random.default_rng(0)
    pairs = []
    for _ in range(3):
        order = rng.permutation(150)
        pairs.append((order[:100], order[100:]))
    log = pr.cross_validate_log(
        {"nb": GaussianNB()},
        iris.data,
        iris.target,
        cv=pairs,
        class_names=iris.target_names,
        dataset="iris",
    )
    assert log.columns[0] == "dataset"
    assert log["dataset"].unique().to_list() == ["iris"]
    assert log["fold"].unique().sort().to_list() == [0, 1, 2]
    assert log.schema["class"] == pl.Enum(list(iris.target_names))
    assert log.schema["label"] == pl.Enum(list(iris.target_names))
    named = log.filter(pl.col("fold") == 1).select("sample", "label").unique().sort("sample")
    expected = iris.target_names[iris.target[np.sort(pairs[1][1])]]
    assert named["label"].cast(pl.String).to_list() == expected.tolist()


class OneColumn:
    """A three-class 'estimator' whose score has one column: not a loggable score."""

    classes_ = np.array([0, 1, 2])

    def get_params(self, deep=True):
        return {}

    def set_params(self, **params):
        return self

    def fit(self, x, y):
        return self

    def predict_proba(self, x):
        return np.zeros(len(x))


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda x, y: pr.cross_validate_log({}, x, y), ValueError, "is empty"),
        (lambda x, y: pr.cross_validate_log({1: GaussianNB()}, x, y), TypeError, "strings"),
        (
            lambda x, y: pr.cross_validate_log({"nb": GaussianNB()}, x, y[:-1]),
            ValueError,
            "150 rows",
        ),
        (
            lambda x, y: pr.cross_validate_log({"svm": LinearSVC()}, x, y),
            TypeError,
            "has no predict_proba",
        ),
        (
            lambda x, y: pr.cross_validate_log({"nb": GaussianNB()}, x, y, class_names=["a", "b"]),
            ValueError,
            "integers 0 … 1",
        ),
        (
            lambda x, y: pr.cross_validate_log(
                {"nb": GaussianNB()}, x, y, cv=[(np.arange(150), np.array([], dtype=int))]
            ),
            ValueError,
            "no test rows",
        ),
        (
            lambda x, y: pr.cross_validate_log({"one": OneColumn()}, x, y, cv=3),
            ValueError,
            "one score",
        ),
    ],
)
def test_bad_input_says_what_to_fix(iris, call, error, match):
    with pytest.raises(error, match=match):
        call(iris.data, iris.target)


# ------------------------------------------------------------------ repeated designs


def fold_ids(log: pl.DataFrame) -> pl.DataFrame:
    """One row per (repeat, sample): the fold that tested the sample in that repeat."""
    return log.select("repeat", "sample", "fold").unique().sort("repeat", "sample")


def test_each_repeat_is_a_stratified_partition(cancer):
    x, y = cancer
    log = pr.cross_validate_log(models(), x, y, cv=4, repeats=3, seed=5)
    assert log.columns == ["model", "repeat", "fold", "sample", "class", "score", "label"]
    assert log.schema["repeat"] == pl.Int64
    assert log.height == 3 * 2 * len(y) * 2  # repeats × models × samples × classes
    per_split = log.group_by("model", "repeat", "fold").agg(
        pl.col("sample").unique().sort().alias("test")
    )
    assert sorted(per_split["repeat"].unique().to_list()) == [0, 1, 2]
    assert sorted(per_split["fold"].unique().to_list()) == [0, 1, 2, 3]
    runs = per_split.partition_by("model", "repeat")
    assert len(runs) == 2 * 3
    for splits in runs:
        tested = np.concatenate(splits["test"].to_list())
        # every sample tested exactly once per repeat and model
        np.testing.assert_array_equal(np.sort(tested), np.arange(len(y)))
        for test in splits["test"].to_list():
            for cls in (0, 1):
                share = np.sum(y == cls) / 4
                assert np.floor(share) <= np.sum(y[test] == cls) <= np.ceil(share)
    # repeats are different splits, not relabelled copies of one
    ids = fold_ids(log.filter(pl.col("model") == "nb"))
    together = [
        {frozenset(t) for t in part.group_by("fold").agg("sample")["sample"].to_list()}
        for part in ids.partition_by("repeat", maintain_order=True)
    ]
    assert together[0] != together[1] != together[2] != together[0]


def test_repeated_log_is_seeded(cancer):
    x, y = cancer
    first = pr.cross_validate_log({"nb": GaussianNB()}, x, y, cv=3, repeats=4, seed=8)
    again = pr.cross_validate_log({"nb": GaussianNB()}, x, y, cv=3, repeats=4, seed=8)
    other = pr.cross_validate_log({"nb": GaussianNB()}, x, y, cv=3, repeats=4, seed=9)
    assert first.equals(again)
    assert not fold_ids(first)["fold"].equals(fold_ids(other)["fold"])


def test_repeated_scores_equal_a_manual_refit(cancer):
    x, y = cancer
    log = pr.cross_validate_log(models(), x, y, cv=4, repeats=3, seed=5)
    splitter = RepeatedStratifiedKFold(n_splits=4, n_repeats=3, random_state=5)
    for split, (train, test) in enumerate(splitter.split(x, y)):
        repeat, fold = divmod(split, 4)
        for name, estimator in models().items():
            expected = clone(estimator).fit(x[train], y[train]).predict_proba(x[test])
            rows = log.filter(
                pl.col("model") == name, pl.col("repeat") == repeat, pl.col("fold") == fold
            ).sort("sample", "class")
            np.testing.assert_array_equal(rows["sample"].unique().to_numpy(), np.sort(test))
            order = np.argsort(test)
            np.testing.assert_allclose(
                rows["score"].to_numpy().reshape(-1, 2), expected[order], rtol=1e-12, atol=1e-12
            )
    # the first repeat is the unrepeated design with the same seed
    plain = pr.cross_validate_log(models(), x, y, cv=4, seed=5)
    assert log.filter(pl.col("repeat") == 0).drop("repeat").equals(plain)


def test_five_by_two_design(cancer):
    x, y = cancer
    log = pr.cross_validate_log({"nb": GaussianNB()}, x, y, cv="5x2", seed=1)
    assert log.columns[:3] == ["model", "repeat", "fold"]
    sizes = log.group_by("repeat", "fold").agg(pl.col("sample").n_unique()).sort("repeat", "fold")
    assert sizes.height == 5 * 2
    assert sizes["repeat"].to_list() == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]
    assert sizes["fold"].to_list() == [0, 1] * 5
    assert set(sizes["sample"].to_list()) == {len(y) // 2}  # two halves of 200
    # the same design spelt as k = 2 with five repeats, or as scikit-learn's splitter
    assert log.equals(pr.cross_validate_log({"nb": GaussianNB()}, x, y, cv=2, repeats=5, seed=1))
    splitter = RepeatedStratifiedKFold(n_splits=2, n_repeats=5, random_state=1)
    assert log.equals(pr.cross_validate_log({"nb": GaussianNB()}, x, y, cv=splitter))


def test_repeat_column_only_when_repeats_are_asked_for(iris):
    nb = {"nb": GaussianNB()}
    assert "repeat" not in pr.cross_validate_log(nb, iris.data, iris.target, cv=3).columns
    one = pr.cross_validate_log(nb, iris.data, iris.target, cv=3, repeats=1, seed=2)
    assert one["repeat"].unique().to_list() == [0]
    plain = pr.cross_validate_log(nb, iris.data, iris.target, cv=3, seed=2)
    assert one.drop("repeat").equals(plain)


def test_splits_of_a_repeated_stratified_folds_design(iris):
    # fold ids from pr.stratified_folds(repeat=...), given as (train, test) pairs per repeat
    data = pl.DataFrame({"label": iris.target}).with_row_index("sample")
    design = data.join(pl.DataFrame({"repeat": range(3)}), how="cross").with_columns(
        pr.stratified_folds("label", k=5, seed=4, repeat="repeat")
    )
    pairs = []
    for repeat in range(3):
        part = design.filter(pl.col("repeat") == repeat)
        for fold in range(5):
            test = part.filter(pl.col("fold") == fold)["sample"].to_numpy().astype(int)
            pairs.append((np.setdiff1d(np.arange(150), test), test))
    log = pr.cross_validate_log({"nb": GaussianNB()}, iris.data, iris.target, cv=pairs, repeats=3)
    expected = design.select("repeat", pl.col("sample").cast(pl.Int64), "fold").sort(
        "repeat", "sample"
    )
    assert fold_ids(log).equals(expected)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"cv": 3, "repeats": 0}, "positive integer"),
        ({"cv": 3, "repeats": True}, "positive integer"),
        ({"cv": "5x3"}, "not a design"),
        ({"cv": "5x2", "repeats": 3}, "contradicts cv"),
        (
            {"cv": RepeatedStratifiedKFold(n_splits=2, n_repeats=2, random_state=0), "repeats": 3},
            "n_repeats=2",
        ),
        ({"cv": StratifiedKFold(3), "repeats": 2}, "3 splits do not make 2 repeats"),
    ],
)
def test_bad_repeats_say_what_to_fix(iris, kwargs, match):
    with pytest.raises(ValueError, match=match):
        pr.cross_validate_log({"nb": GaussianNB()}, iris.data, iris.target, **kwargs)


def test_repeated_log_chains_into_the_corrected_test(cancer):
    x, y = cancer
    log = pr.cross_validate_log(models(), x, y, cv=4, repeats=3, seed=5)
    table = pr.evaluate(log).collect()  # by defaults to (model, repeat, fold)
    assert table.select("model", "repeat", "fold").n_unique() == table.height == 2 * 3 * 4
    for row in table.filter(pl.col("model") == "nb").iter_rows(named=True):
        part = log.filter(
            pl.col("model") == "nb",
            pl.col("repeat") == row["repeat"],
            pl.col("fold") == row["fold"],
        )
        directions = [
            roc_auc_score((one["label"] == cls).to_numpy(), one["score"].to_numpy())
            for cls in (0, 1)
            for one in [part.filter(pl.col("class") == cls)]
        ]
        assert row["auc"] == pytest.approx(np.mean(directions), abs=1e-12)
    # the paired test sees all 12 (repeat, fold) pairs, corrected by default
    test = pr.paired_ttest(table).collect()
    assert test["n"].to_list() == [12]
    # without its repeat column the log repeats (model, fold, sample) keys: an error, not a pool
    with pytest.raises(ValueError, match="repeat"):
        pr.evaluate(log.drop("repeat")).collect()


def test_a_missing_method_suggests_one_the_model_has():
    # issue 14: the message suggested the very method the model lacked
    from sklearn.naive_bayes import GaussianNB
    from sklearn.svm import LinearSVC

    x = np.random.default_rng(0).normal(size=(40, 3))
    y = np.arange(40) % 2
    with pytest.raises(
        TypeError,
        match=r"no decision_function\(\); pick a method it has, e.g. method='predict_proba'",
    ):
        pr.cross_validate_log({"nb": GaussianNB()}, x, y, method="decision_function", cv=2)
    with pytest.raises(
        TypeError,
        match=r"no predict_proba\(\); pick a method it has, e.g. method='decision_function'",
    ):
        pr.cross_validate_log({"svm": LinearSVC()}, x, y, method="predict_proba", cv=2)


def test_without_scikit_learn_the_error_names_the_extra(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "sklearn.base", None)  # as if it were not installed
    x, y = load_iris(return_X_y=True)
    with pytest.raises(ImportError, match=r"polaroc\[sklearn\]"):
        pr.cross_validate_log({"nb": GaussianNB()}, x, y)
