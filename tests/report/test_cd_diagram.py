"""The critical-difference diagram against autorank's and scikit-posthocs' Nemenyi results."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import polars as pl
import pytest
import scikit_posthocs as sp
from autorank import autorank
from autorank._util import get_sorted_rank_groups

from polaroc import plot

MODELS = ["logistic", "forest", "lda", "knn9", "naive_bayes", "tree"]


def table(seed: int, n_datasets: int = 12, spread: float = 0.03) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    effects = [0.9, 0.89, 0.88, 0.86, 0.85, 0.8]
    return pl.DataFrame(
        [
            {"dataset": f"d{d:02d}", "model": m, "auc": e + rng.normal(0, spread)}
            for d in range(n_datasets)
            for m, e in zip(MODELS, effects, strict=True)
        ]
    )


def drawn(fig) -> tuple[float, list[list[str]]]:
    gids = [ln.get_gid() for ln in fig.axes[0].lines if ln.get_gid()]
    cd = next(float(g.split(":")[1]) for g in gids if g.startswith("cd:"))
    cliques = [g.split(":")[1].split(",") for g in gids if g.startswith("clique:")]
    return cd, cliques


@pytest.mark.parametrize(("seed", "n", "spread"), [(0, 12, 0.03), (1, 8, 0.05), (2, 30, 0.02)])
def test_cd_and_cliques_match_autorank(seed, n, spread):
    t = table(seed, n, spread)
    wide = t.pivot("model", index="dataset", values="auc").sort("dataset").drop("dataset")
    result = autorank(
        wide.to_pandas(), alpha=0.05, verbose=False, order="descending",
        force_mode="nonparametric",
    )  # fmt: skip
    cd, cliques = drawn(plot.cd_diagram(t))
    # autorank takes q from statsmodels' qsturng table interpolation (~1e-5 off scipy)
    assert cd == pytest.approx(result.cd, rel=1e-4)
    _, names, groups = get_sorted_rank_groups(result, reverse=False)
    expected = [names[i : j + 1] for i, j in groups]
    assert sorted(map(sorted, cliques)) == sorted(map(sorted, expected))


def test_every_clique_is_unseparated_by_scikit_posthocs_nemenyi():
    t = table(4, 10, 0.04)
    wide = t.pivot("model", index="dataset", values="auc").sort("dataset").drop("dataset")
    p = sp.posthoc_nemenyi_friedman(wide.to_pandas())
    _, cliques = drawn(plot.cd_diagram(t))
    assert cliques
    for clique in cliques:
        for a in clique:
            for b in clique:
                assert p.loc[a, b] > 0.05
    # every unseparated pair sits together in some clique
    for a in MODELS:
        for b in MODELS:
            if a != b and p.loc[a, b] > 0.05:
                assert any(a in c and b in c for c in cliques), (a, b)


def test_per_fold_table_without_dataset_ranks_over_folds():
    t = table(5, 10).rename({"dataset": "fold"})
    cd, _ = drawn(plot.cd_diagram(t))
    k, n = 6, 10
    q = 2.850  # Demšar (2006) Table 5a, k = 6, alpha = 0.05
    assert cd == pytest.approx(q * np.sqrt(k * (k + 1) / (6 * n)), abs=1e-3)


def test_lower_is_better_reverses_the_order():
    t = table(6).with_columns(error=1 - pl.col("auc"))
    a = plot.cd_diagram(t, "auc")
    b = plot.cd_diagram(t, "error", higher_is_better=False)
    labels = lambda fig: [x.get_text() for x in fig.axes[0].texts if "(" in x.get_text()]
    assert labels(a) == labels(b)
    assert isinstance(pd.Series(labels(a)), pd.Series)
