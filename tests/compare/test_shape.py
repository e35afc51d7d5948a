"""Every comparison table answers in one shape (DESIGN "Comparison tables share one shape").

The tables are run through :data:`polaroc.compare.registry.REGISTRY` on real-shaped input:
a per-fold table of several data sets × models × 5 repeats × 2 folds (the shape of
``pr.evaluate`` on a repeated log: Int64 ids, string models, Float64 metrics), the demo
log for the tests that read a log. The columns must come in the fixed order with the
fixed dtypes, and any two tables must concatenate diagonally.
"""

from __future__ import annotations

import inspect
import itertools
from functools import cache

import numpy as np
import polars as pl
import pytest

import polaroc as pr
from polaroc.compare.registry import ADJUSTMENTS, REGISTRY, Comparison, comparison
from polaroc.core.log import COLUMN_KEYWORDS

# Tests other branches are adding; the lead registers each once it answers in the shape.
PENDING = (
    "delong_test",
    "delong_omnibus",
    "bootstrap_test",
    "venkatraman_test",
    "mcnemar_test",
    "cochran_q",
)


@cache
def fold_table() -> pl.DataFrame:
    """Three data sets × four models × 5 repeats × 2 folds, with model and fold effects."""
    rng = np.random.default_rng(7)
    rows = []
    for d in range(6):
        effect = rng.normal(0, 0.03, 4)
        for r, f in itertools.product(range(5), range(2)):
            split = rng.normal(0, 0.02)
            for m in range(4):
                auc = 0.8 + effect[m] + split + rng.normal(0, 0.02)
                rows.append((f"d{d}", f"m{m}", r, f, auc, 1.0 - auc + rng.normal(0, 0.01)))
    schema = {
        "dataset": pl.String, "model": pl.String, "repeat": pl.Int64, "fold": pl.Int64,
        "auc": pl.Float64, "error": pl.Float64,
    }  # fmt: skip
    return pl.DataFrame(rows, schema=schema, orient="row")


@cache
def demo_log() -> pl.DataFrame:
    return pl.read_parquet(pr.demo_log_path())


def run(entry: Comparison, **options: object) -> pl.DataFrame:
    if entry.reads == "log":
        log = demo_log()
        options = {
            "positive_class": "malignant",
            "n_boot": 200,
            "n_perm": 200,
            "seed": 1,
            **options,
        }
        models = sorted(log["model"].unique().to_list())[:3]
        if entry.kind == "k-model":
            return entry(log, **options).collect()
        return entry(log, models[0], models[1], **options).collect()
    return entry(fold_table(), "auc", **options).collect()


def by_columns(entry: Comparison) -> list[str]:
    return ["dataset"] if entry.reads == "folds" else []


def expected_head(entry: Comparison, columns: list[str], adjusted: bool) -> list[str]:
    """The fixed leading columns of ``entry``'s table, given the df columns it has."""
    # df, or df_num and df_den (Friedman's extras include Iman–Davenport's df_num, df_den)
    df = ["df"] if "df" in columns else [c for c in ("df_num", "df_den") if c in columns]
    by = by_columns(entry)
    if entry.kind == "bayes":
        return [*by, "model_a", "model_b", "n", "estimate", "p_a_higher", "p_rope", "p_b_higher"]
    if entry.kind == "k-model":
        source = ["source"] if "source" in columns else []
        k = ["k"] if entry.reads == "log" else []  # DeLong's omnibus and Cochran's Q: models
        return [*by, *source, "n", *k, "statistic", *df, "p_value"]
    decided = ["p_adjusted", "reject"] if adjusted else ["reject"]
    return [*by, "model_a", "model_b", "n", "estimate", "statistic", *df, "p_value", *decided]


NAMES = sorted({*REGISTRY, *PENDING})


def entry_of(name: str) -> Comparison:
    entry = comparison(name)
    assert entry is not None, f"{name} is not in polaroc.compare.registry.REGISTRY"
    return entry


FLOATS = ("estimate", "statistic", "p_value", "p_adjusted", "p_a_higher", "p_rope", "p_b_higher")


@pytest.mark.parametrize("name", NAMES)
def test_columns_and_dtypes(name):
    entry = entry_of(name)
    out = run(entry)
    head = expected_head(entry, out.columns, adjusted=False)
    assert out.columns[: len(head)] == head
    schema = out.schema
    assert schema["n"] == pl.Int64
    for column in FLOATS:
        if column in schema:
            assert schema[column] == pl.Float64, column
    for column in ("df", "df_num", "df_den"):
        if column in schema:
            assert schema[column] == pl.Float64, column  # fractional df (Welch) too
    if "reject" in schema:
        assert schema["reject"] == pl.Boolean
    for old in ("t", "k", "mean_diff", "f", "z", "chi2", "n_datasets"):
        if old == "k" and entry.kind == "k-model" and entry.reads == "log":
            continue  # delong_omnibus and cochran_q keep k, the number of models compared
        assert old not in out.columns, old
    if entry.kind != "k-model":
        rows = out.select("model_a", "model_b").rows()
        assert all(a < b for a, b in rows)
        assert out["n"].min() >= 1


@pytest.mark.parametrize("adjust", ADJUSTMENTS)
@pytest.mark.parametrize(
    "name", [n for n in NAMES if n in REGISTRY and "adjust" in REGISTRY[n].options]
)
def test_adjusted_tables_put_p_adjusted_before_reject(name, adjust):
    entry = entry_of(name)
    out = run(entry, adjust=adjust)
    head = expected_head(entry, out.columns, adjusted=True)
    assert out.columns[: len(head)] == head
    assert out.schema["p_adjusted"] == pl.Float64
    assert (out["p_adjusted"] >= out["p_value"] - 1e-15).all()
    assert out["reject"].to_list() == (out["p_adjusted"] <= 0.05).to_list()


def test_every_pair_of_tables_concatenates_diagonally():
    tables = {}
    for name in NAMES:
        tables[name] = run(entry_of(name))
    assert {"paired_ttest", "sign_test", "bayes_ttest", "friedman_test"} <= set(tables)
    for (a, x), (b, y) in itertools.combinations(tables.items(), 2):
        both = pl.concat([x, y], how="diagonal")
        assert both.height == x.height + y.height, (a, b)
        for column in ("n", "estimate", "statistic", "p_value", "reject"):
            if column in both.columns:
                assert both.schema[column] == (x.schema.get(column) or y.schema[column])


def test_registry_names_the_functions_polaroc_exports():
    for name, entry in REGISTRY.items():
        assert entry.name == name
        assert getattr(pr, name) is entry.function
        assert comparison(entry.function) is entry
    # the registry only passes options a function takes
    assert REGISTRY["anova"].accepted(alpha=0.05, by=(), rope=0.1) == {"by": ()}


def test_registry_options_are_the_functions_keywords():
    # every option the registry passes is a keyword the function takes; a test that reads
    # a log takes by=, every column keyword of the log (dataset and repeat included) and
    # the positive class of a two-class log
    for name, entry in REGISTRY.items():
        parameters = inspect.signature(entry.function).parameters
        columns = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
        taken = set(parameters) | (set(COLUMN_KEYWORDS) if columns else set())
        assert entry.options <= taken, (name, sorted(entry.options - taken))
        if entry.reads == "log":
            assert {"by", "positive_class", *COLUMN_KEYWORDS} <= entry.options, name


def test_unpaired_delong_concatenates_diagonally_with_every_table():
    # Welch–Satterthwaite's df is fractional: every table's df must be Float64 to stack
    unpaired = run(REGISTRY["delong_test"], paired=False)
    assert unpaired.schema["df"] == pl.Float64
    assert unpaired["df"].to_list() != [round(x) for x in unpaired["df"].to_list()]
    for name in NAMES:
        other = run(entry_of(name))
        both = pl.concat([unpaired, other], how="diagonal")
        assert both.height == unpaired.height + other.height, name
        for column in ("df", "df_num", "df_den"):
            if column in both.columns:
                assert both.schema[column] == pl.Float64, (name, column)
