"""Every comparison function on random awkward per-fold tables (issue 14's contract).

Hypothesis draws small per-fold tables holding NaN, null, ±inf, constant columns,
ties, one or two models, one fold, repeats, missing and duplicated rows, and empty
tables, and feeds each to every comparison function. Each call must either raise a
``ValueError``/``TypeError`` whose message is a few lines, or return a table in
which NaN never became a finite number, an infinity or a decision:

* a row (a model pair, or a by group) computed from a NaN value — a NaN that is
  sure to enter it: the pair or group holds a NaN and no null — has every
  statistic NaN or null and every decision (``reject``) null;
* every p-value or probability is in [0, 1], NaN or null, and ``reject`` is true
  only for a p-value at most α.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.exceptions import ComputeError

import polaroc as pr

NAN, INF = float("nan"), float("inf")
ALPHA = 0.05
MAX_LINES = 4  # "a message of a few lines"


@dataclass(frozen=True)
class Case:
    """A comparison function and how to judge its output rows for NaN."""

    name: str
    function: Callable[..., pl.LazyFrame]
    block: str  # "fold" (per-fold tests) or "dataset" (tests across data sets)
    unit: str  # "pair", "group", "model" or "agreement": what a NaN voids
    options: dict[str, object] = field(default_factory=dict)
    # float columns that need not follow a NaN (quantiles from sizes, other models' means)
    free: frozenset[str] = field(default_factory=frozenset)

    def __call__(self, table: pl.DataFrame, **extra: object) -> pl.LazyFrame:
        return self.function(table, **self.options, **extra)


def _cases() -> list[Case]:
    sizes = frozenset({"cd", "alpha_p", "studentized_range", "mean"})
    cases = [
        Case("paired_ttest", pr.paired_ttest, "fold", "pair"),
        Case("paired_uncorrected", pr.paired_ttest, "fold", "pair", {"correction": False}),
        Case("paired_holm", pr.paired_ttest, "fold", "pair", {"adjust": "holm"}),
        Case("anova", pr.anova, "fold", "group"),
        Case("duncan", pr.duncan, "fold", "group", free=sizes),
        Case("duncan_ranges", pr.duncan_ranges, "fold", "group", free=sizes),
        Case("duncan_subsets", pr.duncan_subsets, "fold", "group", free=sizes),
        Case(
            "test_agreement",
            pr.test_agreement,
            "fold",
            "agreement",
            {"metrics": ("auc", (1 - pl.col("error")).alias("accuracy"))},
        ),
        Case("se_vs_sd", pr.se_vs_sd, "fold", "model", {"se": "se"}),
        Case("wilcoxon_test", pr.wilcoxon_test, "dataset", "pair"),
        Case("wilcoxon_holm", pr.test_agreement, "dataset", "agreement",
             {"test": pr.wilcoxon_test, "adjust": "holm", "metrics": ("auc", "error")}),
        Case("friedman_test", pr.friedman_test, "dataset", "group", free=sizes),
        Case("nemenyi_test", pr.nemenyi_test, "dataset", "group", free=sizes),
        Case("mean_ranks", pr.mean_ranks, "dataset", "group", free=sizes),
    ]  # fmt: skip
    # the tests of issue 15 (helper A2), whichever of them polaroc has
    optional = {
        "sign_test": ("dataset", {}),
        "bayes_signed_rank": ("dataset", {"n_samples": 2000, "seed": 1}),
        "bayes_ttest": ("fold", {}),
        "paired_ttest_5x2cv": ("fold", {}),
        "combined_ftest_5x2cv": ("fold", {}),
    }
    for name, (block, options) in optional.items():
        if hasattr(pr, name):
            cases.append(Case(name, getattr(pr, name), block, "pair", options))
    return cases


CASES = _cases()

values = st.one_of(
    st.floats(0.0, 1.0),
    st.sampled_from([0.5, 0.5, 0.75, NAN, NAN, None, INF, -INF, 0.0, 1.0]),
)


@st.composite
def awkward_tables(draw: st.DrawFn) -> pl.DataFrame:
    """A small (model, [repeat,] fold) table with awkward values and designs."""
    models = draw(st.integers(0, 3))
    if draw(st.booleans()):
        repeats, folds = 5, 2  # the 5×2 cv design
    else:
        repeats, folds = draw(st.integers(1, 2)), draw(st.integers(0, 4))
    keys = [(f"m{m}", r, f) for m in range(models) for r in range(repeats) for f in range(folds)]
    constant = draw(st.sampled_from([None, 0.8, NAN]))
    rows = [
        (m, r, f, constant if constant is not None else draw(values), draw(values), draw(values))
        for m, r, f in keys
    ]
    if rows and draw(st.integers(0, 5)) == 0:
        rows.pop(draw(st.integers(0, len(rows) - 1)))  # a missing cell
    if rows and draw(st.integers(0, 7)) == 0:
        rows.append(rows[draw(st.integers(0, len(rows) - 1))])  # a duplicated cell
    schema = {
        "model": pl.String,
        "repeat": pl.Int64,
        "fold": pl.Int64,
        "auc": pl.Float64,
        "error": pl.Float64,
        "se": pl.Float64,
    }
    table = pl.DataFrame(rows, schema=schema, orient="row")
    return table if repeats > 1 or draw(st.booleans()) else table.drop("repeat")


def _short_error(error: Exception, *, lazy: bool = False) -> None:
    """A message of a few lines; for a lazy query, its first line is the message."""
    text = str(error).strip()
    assert "panicked" not in text
    assert "Traceback" not in text
    lines = text.splitlines()
    if lazy:  # Polars appends the failing expression after a blank line
        assert lines, type(error)
        assert lines[0].startswith("polaroc:") or len(lines[0]) < 300, text
        return
    assert 0 < len(lines) <= MAX_LINES, text


def _run(
    case: Case, table: pl.DataFrame, *, lazy: bool = False, **extra: object
) -> pl.DataFrame | None:
    """The function's output, or None after a short ValueError/TypeError."""
    if case.block == "dataset":
        # across data sets: the block column is the data set
        table = table.drop("repeat", strict=False).rename({"fold": "dataset"})
    try:
        return case(table.lazy() if lazy else table, **extra).collect()
    except (ValueError, TypeError, ComputeError) as error:
        if not lazy and not isinstance(error, ValueError | TypeError):
            pytest.fail(f"{case.name}: a bare ComputeError for a DataFrame input: {error}")
        _short_error(error, lazy=lazy)
        return None


def _tainted_models(table: pl.DataFrame) -> tuple[set[str], set[str]]:
    """Models holding a NaN (in auc or error), and models holding a null there."""
    metric = pl.col("auc")
    nan = set(table.filter(metric.is_nan())["model"])
    null = set(table.filter(metric.is_null())["model"])
    return nan, null


def _is_void(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _check_row(case: Case, row: dict, ident: set[str]) -> None:
    for column, value in row.items():
        if column in ident or column in case.free or column.startswith("n"):
            continue
        if column in ("df", "df_num", "df_den"):
            continue  # degrees of freedom describe the design (Float64 counts), kept as-is
        if isinstance(value, bool) or value is None:
            assert value is None, f"{case.name}: {column} decided from NaN"
        elif isinstance(value, float):
            assert math.isnan(value), f"{case.name}: {column} = {value} from NaN"


def _check_p_values(case: Case, out: pl.DataFrame) -> None:
    probabilities = [c for c in out.columns if c.startswith(("p_value", "p_adjusted", "p_a_"))]
    probabilities += [c for c in out.columns if c in ("p_rope", "p_b_higher")]
    for column in probabilities:
        p = out[column].drop_nulls().drop_nans()
        assert ((p >= 0) & (p <= 1)).all(), f"{case.name}: {column} outside [0, 1]"
    if "reject" in out.columns and "p_value" in out.columns:
        p = out["p_adjusted"] if "p_adjusted" in out.columns else out["p_value"]
        for decided, value in zip(out["reject"], p, strict=True):
            if decided:
                assert not _is_void(value), f"{case.name}: reject without a p-value"
                assert value <= ALPHA, f"{case.name}: reject with p = {value}"


def _check_nan(case: Case, table: pl.DataFrame, out: pl.DataFrame) -> None:
    nan, null = _tainted_models(table)
    if not nan:
        return
    ident = {"model", "model_a", "model_b", "source", "group", "models", "method", "p", "k"}
    if case.unit == "group":
        if null:
            return  # a null block may carry the NaN away
        for row in out.iter_rows(named=True):
            _check_row(case, row, ident)
    elif case.unit == "pair":
        for row in out.iter_rows(named=True):
            pair = {row["model_a"], row["model_b"]}
            if pair & nan and not pair & null:
                _check_row(case, row, ident)
    elif case.unit == "model":
        # se_vs_sd leaves out a row whose SE is null: its NaN goes with it
        used = table.filter(pl.col("se").is_not_null())
        nan, null = _tainted_models(used)
        for row in out.iter_rows(named=True):
            if row["model"] in nan and row["model"] not in null:
                assert _is_void(row["sd"]), case.name
                assert _is_void(row["mean"]), case.name
    elif case.unit == "agreement":
        for pair in out["pairs"].explode().drop_nulls().struct.unnest().iter_rows(named=True):
            if {pair["model_a"], pair["model_b"]} & nan and not null:
                assert _is_void(pair["p_value_auc"]), case.name
                assert pair["better_auc"] is None, case.name
        if not null:
            decided = out.filter(pl.col("case") != "undecided")["pairs"].explode().drop_nulls()
            for pair in decided.struct.unnest().iter_rows(named=True):
                assert not {pair["model_a"], pair["model_b"]} & nan, case.name


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(table=awkward_tables())
def test_awkward_tables_give_a_short_error_or_no_decision_from_nan(case, table):
    out = _run(case, table)
    if out is None:
        return
    _check_p_values(case, out)
    _check_nan(case, table, out)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(table=awkward_tables())
def test_lazy_awkward_tables_fail_with_the_message_first(case, table):
    out = _run(case, table, lazy=True)
    if out is None:
        return
    _check_p_values(case, out)
    _check_nan(case, table, out)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_empty_table_is_a_short_value_error(case):
    empty = pl.DataFrame(
        schema={"model": pl.String, "fold": pl.Int64, "auc": pl.Float64, "error": pl.Float64}
    ).with_columns(se=pl.col("auc"))
    out = _run(case, empty)
    assert out is None or out.height == 0 or case.name in ("test_agreement",)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_one_group_by_empty_tuple(case):
    rows = [(m, f, 0.7 + 0.05 * i + 0.01 * f) for i, m in enumerate("abc") for f in range(6)]
    table = pl.DataFrame(rows, schema=["model", "fold", "auc"], orient="row", strict=False)
    table = table.with_columns(error=1 - pl.col("auc"), se=pl.lit(0.02))
    out = _run(case, table, by=())
    if case.name in ("paired_ttest_5x2cv", "combined_ftest_5x2cv"):
        return  # they need the 5×2 design (a short ValueError, checked by _run)
    assert out is not None
    assert out.height > 0
