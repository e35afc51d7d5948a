"""Per-fold tables for the comparison tests: synthetic ones and real scikit-learn CV runs."""

from __future__ import annotations

from functools import cache

import numpy as np
import polars as pl


def random_table(
    rng: np.random.Generator,
    models: int = 4,
    folds: int = 10,
    datasets: int = 1,
    *,
    spread: float = 0.03,
) -> pl.DataFrame:
    """A balanced (dataset, model, fold) table with model and fold effects plus noise."""
    rows = []
    for d in range(datasets):
        model_effect = rng.normal(0, spread, models)
        fold_effect = rng.normal(0, spread, folds)
        for m in range(models):
            for f in range(folds):
                auc = 0.8 + model_effect[m] + fold_effect[f] + rng.normal(0, spread)
                error = 0.2 - 0.5 * model_effect[m] + rng.normal(0, spread)
                rows.append((f"d{d}", f"m{m}", f, auc, error))
    return pl.DataFrame(rows, schema=["dataset", "model", "fold", "auc", "error"], orient="row")


def vector(table: pl.DataFrame, model: str, metric: str = "auc", **where) -> np.ndarray:
    """The model's metric values ordered by fold."""
    part = table.filter(pl.col("model") == model, **where).sort("fold")
    return part[metric].to_numpy()


@cache
def sklearn_cv_log(n_splits: int = 10, seed: int = 0) -> pl.DataFrame:
    """A real binary score log: four scikit-learn classifiers, stratified k-fold CV.

    One row per (model, fold, sample): the positive-class probability, the label and
    the sample id. No network: the data come from ``make_classification``.
    """
    from sklearn.datasets import make_classification
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold
    from sklearn.naive_bayes import GaussianNB
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.tree import DecisionTreeClassifier

    x, y = make_classification(
        n_samples=600, n_features=8, n_informative=4, flip_y=0.08, random_state=seed
    )
    models = {
        "logreg": LogisticRegression(max_iter=500),
        "nb": GaussianNB(),
        "tree": DecisionTreeClassifier(max_depth=3, random_state=seed),
        "knn": KNeighborsClassifier(n_neighbors=15),
    }
    parts = []
    splits = StratifiedKFold(n_splits=n_splits, shuffle=True, random_state=seed).split(x, y)
    for fold, (train, test) in enumerate(splits):
        for name, estimator in models.items():
            score = estimator.fit(x[train], y[train]).predict_proba(x[test])[:, 1]
            parts.append(
                pl.DataFrame(
                    {
                        "model": name,
                        "fold": fold,
                        "sample": test,
                        "score": score,
                        "label": y[test].astype(bool),
                    }
                )
            )
    return pl.concat(parts)


def sklearn_fold_table(log: pl.DataFrame) -> pl.DataFrame:
    """Per-fold AUC and error of a binary log, computed with scikit-learn (the oracle)."""
    from sklearn.metrics import roc_auc_score

    rows = []
    for (model, fold), part in log.partition_by("model", "fold", as_dict=True).items():
        y, s = part["label"].to_numpy(), part["score"].to_numpy()
        rows.append((model, fold, roc_auc_score(y, s), float(((s >= 0.5) != y).mean())))
    table = pl.DataFrame(rows, schema=["model", "fold", "auc", "error"], orient="row")
    return table.sort("model", "fold")


@cache
def sklearn_selection_log(seed: int = 0, rounds: int = 10) -> pl.DataFrame:
    """Wu & Flach's (2005, §4) protocol on real models: per round, 8 folds train, 1 validates, 1 tests.

    One row per (round, split, model, sample) with the positive-class probability.
    """
    from sklearn.datasets import make_classification
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold
    from sklearn.naive_bayes import GaussianNB
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.tree import DecisionTreeClassifier

    x, y = make_classification(
        n_samples=300, n_features=6, n_informative=3, flip_y=0.1, random_state=seed
    )
    parts_of = [
        test for _, test in StratifiedKFold(rounds, shuffle=True, random_state=seed).split(x, y)
    ]
    models = {
        "logreg": LogisticRegression(max_iter=500),
        "nb": GaussianNB(),
        "tree": DecisionTreeClassifier(max_depth=4, random_state=seed),
        "knn": KNeighborsClassifier(n_neighbors=7),
    }
    rows = []
    for r in range(rounds):
        test, validation = parts_of[r], parts_of[(r + 1) % rounds]
        train = np.setdiff1d(np.arange(len(y)), np.r_[test, validation])
        for name, estimator in models.items():
            estimator.fit(x[train], y[train])
            for split, idx in (("validation", validation), ("test", test)):
                rows.append(
                    pl.DataFrame(
                        {
                            "model": name,
                            "fold": r,
                            "split": split,
                            "sample": idx,
                            "score": estimator.predict_proba(x[idx])[:, 1],
                            "label": y[idx].astype(bool),
                        }
                    )
                )
    return pl.concat(rows)
