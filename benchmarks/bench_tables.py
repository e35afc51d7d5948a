"""The comparison tables on a per-fold table: paired t tests, two-way ANOVA, Duncan.

A table of 50 models × 10 folds (one AUC per cell) gives 1,225 model pairs. polaroc
builds each table as one lazy plan; the peers are scipy's ``ttest_rel`` looped over
the pairs and statsmodels' two-way ANOVA (``anova_lm`` of ``auc ~ C(model) + C(fold)``).
Before timing, the t statistics and p-values must agree with scipy on every pair,
the ANOVA with statsmodels on every source, and Duncan's means with numpy, to 1e-9.

Run: python -m benchmarks.bench_tables [--models 50] [--folds 10] [--repeat 5]
"""

from __future__ import annotations

import argparse
import itertools

import numpy as np
import polars as pl
from scipy import stats

import polaroc as pr
from benchmarks.common import assert_agree, markdown, time_all

POLAROC = "pr.paired_ttest + pr.anova + pr.duncan (collect_all)"


def fold_table(models: int, folds: int, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    quality = rng.uniform(0.7, 0.9, models)
    fold_effect = rng.normal(0, 0.02, folds)
    auc = quality[:, None] + fold_effect[None, :] + rng.normal(0, 0.01, (models, folds))
    return pl.DataFrame(
        {
            "model": np.repeat(np.arange(models), folds),
            "fold": np.tile(np.arange(folds), models),
            "auc": auc.ravel(),
        }
    )


def polaroc_tables(table: pl.DataFrame) -> list[pl.DataFrame]:
    return pl.collect_all([pr.paired_ttest(table), pr.anova(table), pr.duncan(table)])


def scipy_pairs(table: pl.DataFrame) -> dict:
    wide = table.sort("fold").pivot("model", index="fold", values="auc")
    models = sorted(table["model"].unique())
    out = {}
    for a, b in itertools.combinations(models, 2):
        result = stats.ttest_rel(wide[str(a)].to_numpy(), wide[str(b)].to_numpy())
        out[(a, b)] = (result.statistic, result.pvalue)
    return out


try:  # optional: the test extra has it, the bench extra does not
    import statsmodels.formula.api as smf
    from statsmodels.stats.anova import anova_lm
except ImportError:
    smf = None


def statsmodels_anova(table: pl.DataFrame) -> dict:
    fit = smf.ols("auc ~ C(model) + C(fold)", data=table.to_pandas()).fit()
    frame = anova_lm(fit)
    names = {"C(model)": "model", "C(fold)": "fold", "Residual": "residual"}
    return {names[k]: row["sum_sq"] for k, row in frame.iterrows()}


def check(table: pl.DataFrame) -> None:
    ttest, anova, duncan = polaroc_tables(table)
    pairs = scipy_pairs(table)
    for i, column in enumerate(("statistic", "p_value")):
        got = {(a, b): v for a, b, v in ttest.select("model_a", "model_b", column).iter_rows()}
        assert_agree({k: v[i] for k, v in pairs.items()}, got, f"paired t {column} vs scipy")
    if smf is not None:
        ss = dict(anova.select("source", "ss").iter_rows())
        assert_agree(statsmodels_anova(table), ss, "ANOVA sums of squares vs statsmodels")
    cells = table.sort("model", "fold")["auc"].to_numpy().reshape(-1, table["fold"].n_unique())
    expected = dict(enumerate(cells.mean(axis=1).tolist()))
    assert_agree(expected, dict(duncan.select("model", "mean").iter_rows()), "Duncan means")


def run(models: int, folds: int, repeat: int) -> str:
    table = fold_table(models, folds)
    check(table)
    methods = {
        POLAROC: lambda: polaroc_tables(table),
        "pr.paired_ttest alone": lambda: pr.paired_ttest(table).collect(),
        "scipy ttest_rel loop over pairs": lambda: scipy_pairs(table),
    }
    if smf is not None:
        methods["statsmodels two-way ANOVA"] = lambda: statsmodels_anova(table)
    timings = time_all(methods, repeat)
    pairs = models * (models - 1) // 2
    title = f"Comparison tables: {models} models × {folds} folds ({pairs:,} model pairs)"
    return markdown(title, timings, POLAROC)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--models", type=int, default=50)
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(run(args.models, args.folds, args.repeat))


if __name__ == "__main__":
    main()
