"""The counting core (issue 33): one count schema, two evaluators, each formula once.

* The core against brute force: every formula over the list evaluator and over the table
  evaluator equals its count over all (positive, negative) pairs (AUC, sAUC, DeLong's
  variance), scikit-learn (average precision) and scipy (KS), weighted and not.
* The one declared fast path (:data:`FAST`, the NumPy evaluator of bootstrap
  replicates) equals the core; no other number is computed beside the evaluators.
* Nothing computes a rank-based number around the core: perturbing the list evaluator's
  counts, then the table evaluator's, changes every public rank-based number.
* The two defects of issue 33 are right: ``max_metric_point(metric="mcc", weight=)`` is
  scale-invariant, and ``smooth_roc(method="density")`` keeps an infinite score at the end
  it ranks at (no silent diagonal).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import ks_2samp
from sklearn.metrics import average_precision_score

import polaroc as pr
from polaroc.core import counts
from polaroc.core import formulas as f
from polaroc.core.replicates import draws, replicate_aucs
from tests.metrics.reference.cases import binary_log, multiclass_log

NAN, INF = float("nan"), float("inf")

# The declared fast path, the public number it serves and its measured gain over the core
# route (docs/architecture.md, "The counting core"; benchmarks/bench_core.py, replicates).
FAST = {
    "core/replicates.py": (
        "pr.bootstrap_test",
        "6.9-7.1x faster than the list evaluator on the drawn rows (10,000 samples x 2,000)",
    ),
}


# ----------------------------------------------------------------- brute force


def _pairs(s: np.ndarray, y: np.ndarray, w: np.ndarray) -> dict[str, float]:
    """AUC, sAUC and DeLong's variance over every (positive, negative) pair."""
    pos, neg = s[y], s[~y]
    wp, wn = w[y], w[~y]
    gt = (pos[:, None] > neg[None, :]).astype(float)
    eq = (pos[:, None] == neg[None, :]).astype(float)
    ww = wp[:, None] * wn[None, :]
    won = gt + 0.5 * eq
    auc = (ww * won).sum() / ww.sum()
    diff = np.where(gt > 0, pos[:, None] - neg[None, :], 0.0)
    sauc = (ww * diff).sum() / ww.sum()
    v10, v01 = won.mean(axis=1), won.mean(axis=0)
    var = (
        v10.var(ddof=1) / len(pos) + v01.var(ddof=1) / len(neg)
        if min(len(pos), len(neg)) > 1
        else NAN
    )
    return {"auc": auc, "sauc": sauc, "var": var}


@st.composite
def groups(draw: st.DrawFn) -> pl.DataFrame:
    n = draw(st.integers(4, 40))
    tied = draw(st.booleans())
    values = st.sampled_from([-0.0, 0.0, 0.25, 0.5, 1.0]) if tied else st.floats(-3, 3, width=32)
    label = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    label[0], label[1] = True, False
    return pl.DataFrame(
        {
            "score": draw(st.lists(values, min_size=n, max_size=n)),
            "label": label,
            "w": draw(st.lists(st.integers(1, 5), min_size=n, max_size=n)),
        },
        schema_overrides={"score": pl.Float64, "w": pl.Float64},
    )


def _assert_brute_force(got: dict[str, float], g: pl.DataFrame, *, weighted: bool) -> None:
    """AUC, sAUC, AP (scikit-learn), KS (scipy) and DeLong's SE against ``g``'s pairs."""
    s, y = g["score"].to_numpy(), g["label"].to_numpy()
    wt = g["w"].to_numpy() if weighted else np.ones(len(s))
    want = _pairs(s, y, wt)
    assert got["auc"] == pytest.approx(want["auc"], abs=1e-12)
    assert got["sauc"] == pytest.approx(want["sauc"], abs=1e-12)
    ap = average_precision_score(y, s, sample_weight=wt)
    assert got["average_precision"] == pytest.approx(ap, abs=1e-12)
    if "ks_statistic" in got and not weighted:
        assert got["ks_statistic"] == pytest.approx(ks_2samp(s[y], s[~y]).statistic, abs=1e-12)
    if not weighted and min(y.sum(), (~y).sum()) > 1:  # DeLong's needs two of each, else null
        assert got["se"] == pytest.approx(np.sqrt(want["var"]), abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(g=groups(), weighted=st.booleans())
def test_the_list_evaluator_equals_brute_force(g: pl.DataFrame, weighted: bool) -> None:
    w = "w" if weighted else None
    got = g.select(
        pr.auc("score", "label", weight=w),
        pr.sauc("score", "label", weight=w),
        pr.average_precision("score", "label", weight=w),
        pr.ks_statistic("score", "label", weight=w),
        pr.auc_se("score", "label").alias("se"),
    ).row(0, named=True)
    _assert_brute_force(got, g, weighted=weighted)


@settings(max_examples=30, deadline=None)
@given(g=groups(), weighted=st.booleans(), collapse=st.booleans())
def test_the_table_evaluator_equals_brute_force(
    g: pl.DataFrame, weighted: bool, collapse: bool
) -> None:
    log = g.with_columns(model=pl.lit("m"), fold=pl.lit(0))
    w = "w" if weighted else None
    table = pr.evaluate(log, weight=w, collapse_ties=collapse).rename({"auc_se_delong": "se"})
    _assert_brute_force(table.collect().row(0, named=True), g, weighted=weighted)


# --------------------------------------------------------- nothing around the core

ListNumbers = dict[str, Callable[[], pl.DataFrame]]


def _list_numbers() -> ListNumbers:
    """Every public number the list evaluator serves, on the binary reference log."""
    log = binary_log().filter(pl.col("dataset") == "d1")
    by = ["model", "repeat", "fold"]

    def exprs(weight: str | None) -> pl.DataFrame:
        s, y, w = "score", "label", weight
        out = [
            pr.auc(s, y, weight=w),
            pr.gini(s, y, weight=w),
            pr.sauc(s, y, weight=w),
            pr.sauc_parts(s, y, weight=w).struct.field("r_pos"),
            pr.average_precision(s, y, weight=w),
            pr.h_measure(s, y, weight=w),
            pr.ks_statistic(s, y, weight=w),
            pr.partial_auc(s, y, max_fpr=0.5, weight=w),
        ]
        if weight is None:
            out += [
                pr.auc_se(s, y).alias("se_delong"),
                pr.auc_se(s, y, method="hanley_mcneil").alias("se_hm"),
                pr.auc_ci(s, y).struct.field("ci_low"),
            ]
        return log.group_by(by).agg(out).sort(by)

    grid = [-0.5, 0.0, 0.5, 1.0]
    tables: ListNumbers = {
        "expressions": lambda: exprs(None),
        "weighted expressions": lambda: exprs("w"),
        "roc_curve": lambda: pr.roc_curve(log).collect(),
        "roc_curve(thresholds=)": lambda: pr.roc_curve(log, thresholds=grid).collect(),
        "pr_curve": lambda: pr.pr_curve(log, weight="w").collect(),
        "threshold_table": lambda: pr.threshold_table(log).collect(),
        "det_curve": lambda: pr.det_curve(log).collect(),
        "gain_curve": lambda: pr.gain_curve(log).collect(),
        "lift_curve": lambda: pr.lift_curve(log, weight="w").collect(),
        "youden_point": lambda: pr.youden_point(log).collect(),
        "closest_topleft_point": lambda: pr.closest_topleft_point(log).collect(),
        "max_metric_point": lambda: pr.max_metric_point(log, metric="mcc").collect(),
        "min_cost_point": lambda: pr.min_cost_point(log).collect(),
        "neyman_pearson_point": lambda: pr.neyman_pearson_point(log, min_sensitivity=0.5).collect(),
        "pooled_roc": lambda: pr.pooled_roc(log).collect(),
        "pooled_pr_curve": lambda: pr.pooled_pr_curve(log).collect(),
        "pooling_table": lambda: pr.pooling_table(log).collect(),
        "average_roc(vertical)": lambda: pr.average_roc(log, grid=5).collect(),
        "average_roc(threshold)": lambda: pr.average_roc(log, method="threshold").collect(),
        "smooth_roc(binormal)": lambda: pr.smooth_roc(log, n=5).collect(),
        "coords_ci": lambda: pr.coords_ci(log, [0.0, 0.5], n_boot=10, seed=2).collect(),
    }
    return tables


def _table_numbers() -> ListNumbers:
    """Every public number the table evaluator serves, on the reference logs."""
    binary = binary_log().filter(pl.col("dataset") == "d1").drop("dataset")
    multi = multiclass_log()

    def evaluate(log: pl.DataFrame, **options: object) -> pl.DataFrame:
        rank_based = ["auc", "sauc", "average_precision", "auc_se_delong", "auc_ci_low"]
        return pr.evaluate(log, **options).collect().select(rank_based)  # type: ignore[arg-type]

    return {
        "evaluate": lambda: evaluate(binary),
        "evaluate(collapse_ties=True)": lambda: evaluate(binary, collapse_ties=True),
        "evaluate(weight=)": lambda: evaluate(binary, weight="w").drop(
            "auc_se_delong", "auc_ci_low"
        ),
        "evaluate multiclass": lambda: evaluate(multi).select("auc", "sauc"),
        "pairwise_auc": lambda: pr.pairwise_auc(multi).collect(),
        "multiclass_auc": lambda: pr.multiclass_auc(multi, weight="w").collect(),
        "delong_test": lambda: pr.delong_test(binary, "a", "b").collect(),
        "delong_omnibus": lambda: pr.delong_omnibus(binary).collect(),
        "roc_ci": lambda: pr.roc_ci(binary, n_boot=10, seed=1).collect(),
        "smooth_roc(density)": lambda: pr.smooth_roc(binary, method="density", n=5).collect(),
        "distributed big groups": lambda: _big(binary),
    }


def _big(log: pl.DataFrame) -> pl.DataFrame:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        log.write_parquet(f"{folder}/log.parquet")
        out = pr.distributed.evaluate(
            f"{folder}/log.parquet", engine="polars", max_group_rows=15, partitions=2
        )
    return out.sort("model", "repeat", "fold").select("auc", "sauc", "average_precision")


def _changed(a: pl.DataFrame, b: pl.DataFrame) -> bool:
    """Whether any float value differs (nulls and NaN compared as values)."""
    if a.shape != b.shape:
        return True
    floats = [c for c, t in a.schema.items() if t.is_float()]
    for c in floats:
        x, y = a[c].fill_nan(-9.0).fill_null(-7.0), b[c].fill_nan(-9.0).fill_null(-7.0)
        if ((x - y).abs() > 1e-9).any():
            return True
    return False


def _perturbed_entries(original: Callable[..., pl.Expr]) -> Callable[..., pl.Expr]:
    """The list evaluator's entries with one more negative below every score."""

    def entries(**options: object) -> pl.Expr:
        return original(**options).struct.with_fields(pl.field("cneg") + 1)

    return entries


def _perturbed_grid(original: Callable[..., pl.Expr]) -> Callable[..., pl.Expr]:
    def grid_entries(grid: list[float]) -> pl.Expr:
        return original(grid).struct.with_fields(pl.field("cneg") + 1)

    return grid_entries


def _perturbed_runs(original: Callable[..., pl.LazyFrame]) -> Callable[..., pl.LazyFrame]:
    """The table evaluator's entries with one more (negative) row below every score."""

    def runs(rows: pl.LazyFrame, *, weighted: bool) -> pl.LazyFrame:
        found = original(rows, weighted=weighted)
        return found.with_columns(pl.col(counts.RB, counts.RU, counts.NR) + 1)

    return runs


LIST_NUMBERS = _list_numbers()
TABLE_NUMBERS = _table_numbers()


@pytest.mark.parametrize("name", sorted(LIST_NUMBERS))
def test_perturbing_the_list_evaluator_changes_every_number(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    number = LIST_NUMBERS[name]
    before = number()
    monkeypatch.setattr(counts, "entries", _perturbed_entries(counts.entries))
    monkeypatch.setattr(counts, "_grid_entries", _perturbed_grid(counts._grid_entries))
    assert _changed(number(), before), f"{name} is computed around the list evaluator"


@pytest.mark.parametrize("name", sorted(TABLE_NUMBERS))
def test_perturbing_the_table_evaluator_changes_every_number(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    number = TABLE_NUMBERS[name]
    before = number()
    monkeypatch.setattr(counts, "_runs", _perturbed_runs(counts._runs))
    assert _changed(number(), before), f"{name} is computed around the table evaluator"


def test_every_rank_based_public_function_is_perturbed() -> None:
    """The two lists above name every public rank-based function (the guard of this file)."""
    named = " ".join([*LIST_NUMBERS, *TABLE_NUMBERS])
    rank_based = [
        "roc_curve", "pr_curve", "threshold_table", "det_curve", "gain_curve", "lift_curve",
        "youden_point", "closest_topleft_point", "max_metric_point", "min_cost_point",
        "neyman_pearson_point", "pooled_roc", "pooled_pr_curve", "pooling_table",
        "average_roc", "smooth_roc", "evaluate", "pairwise_auc", "multiclass_auc",
        "delong_test", "delong_omnibus", "roc_ci", "coords_ci",
    ]  # fmt: skip
    assert [f for f in rank_based if f not in named] == []


# ------------------------------------------------------------------ the defects


def _mcc_log() -> pl.DataFrame:
    rng = np.random.default_rng(1)
    n = 600
    label = rng.random(n) < 0.4
    return pl.DataFrame(
        {
            "model": "m",
            "fold": np.arange(n) % 3,
            "score": rng.normal(size=n) + label,
            "label": label,
            "w": rng.exponential(1.0, n),
        }
    )


@pytest.mark.parametrize("scale", [1e80, 1e-100, 1e160])
def test_max_metric_point_mcc_is_scale_invariant(scale: float) -> None:
    log = _mcc_log()
    unit = pr.max_metric_point(log, metric="mcc", weight="w").collect()
    scaled = pr.max_metric_point(
        log.with_columns(w=pl.col("w") * scale), metric="mcc", weight="w"
    ).collect()
    assert scaled["threshold"].to_list() == unit["threshold"].to_list()
    assert np.allclose(scaled["mcc"].to_numpy(), unit["mcc"].to_numpy(), rtol=0, atol=1e-12)
    # the value is pr.mcc's at that threshold (scale-invariant too)
    for row in scaled.iter_rows(named=True):
        fold = log.filter(pl.col("fold") == row["fold"]).with_columns(w=pl.col("w") * scale)
        mcc = fold.select(pr.mcc("score", "label", threshold=row["threshold"], weight="w")).item()
        assert mcc == pytest.approx(row["mcc"], abs=1e-12)


def _density_log() -> pl.DataFrame:
    rng = np.random.default_rng(3)
    n = 60
    label = rng.random(n) < 0.5
    return pl.DataFrame(
        {"model": "m", "fold": 0, "score": rng.normal(size=n) + label, "label": label}
    )


@pytest.mark.parametrize(("end", "positive"), [(INF, True), (INF, False), (-INF, True)])
def test_density_smooth_keeps_an_infinite_score_at_its_end(end: float, positive: bool) -> None:
    """±inf is a point mass beyond every point: the finite scores' curve, mixed with it.

    With one case (or control) at ±inf, the rates of its class are the curve of the log
    without that row (the same finite scores, so the same density and bandwidth) times the
    finite share, plus the infinite row's share where it lies above the point.
    """
    log = _density_log()
    row = int(np.flatnonzero(log["label"].to_numpy() == positive)[0])
    index = pl.int_range(pl.len())
    with_end = log.with_columns(score=pl.when(index == row).then(end).otherwise("score"))
    without = log.filter(index != row)
    got = pr.smooth_roc(with_end, method="density", n=9).collect()
    finite = pr.smooth_roc(without, method="density", n=9).collect()
    rate = "tpr" if positive else "fpr"
    k = int(log["label"].sum()) if positive else int((~log["label"]).sum())
    share = (k - 1) / k
    inner = slice(1, -1)  # the corners are fixed at (1, 1) and (0, 0)
    above = 1.0 / k if end > 0 else 0.0
    want = finite[rate].to_numpy()[inner] * share + above
    assert np.allclose(got[rate].to_numpy()[inner], want, rtol=0, atol=1e-12)
    other = "fpr" if positive else "tpr"
    assert np.allclose(got[other].to_numpy(), finite[other].to_numpy(), rtol=0, atol=1e-12)
    assert np.isfinite(got["auc"][0])
    assert got["auc"][0] != 0.5


def test_density_smooth_of_fewer_than_two_finite_scores_is_null() -> None:
    log = pl.DataFrame(
        {
            "model": "m",
            "fold": 0,
            "score": [INF, -INF, 0.5, INF],
            "label": [True, False, True, False],
        }
    )
    got = pr.smooth_roc(log, method="density", n=5).collect()
    assert got.height == 1
    assert got["auc"].is_null().all()


# ------------------------------------------------------- counting lives in the core

PACKAGE = Path(__file__).resolve().parents[2] / "polaroc"
_ORDERING = {"sort", "sort_by", "rank", "arg_sort", "argsort", "search_sorted", "searchsorted"}
_RUNNING = {"cum_sum", "cumsum"}
_SCORES = re.compile(r"score|SCORE|threshold|\bs\b")
_COUNTS = re.compile(r"positive|POSITIVE|\bpos\b|\bneg\b|count|\bw\b|weight|sign\b|_pr_[pn]\b")

# Outside polaroc/core, the places that order scores or sum in score order, and why none
# of them counts the count schema's quantities. (The declared fast path, :data:`FAST`,
# lives in the core.)
NOT_COUNTS = {
    ("compare/curve_tests.py", f): "Venkatraman's E: errors at ordinal rank cut-offs, ties "
    "broken in sample order (pROC's ties.method = 'first'), one per permutation"
    for f in ("_rank_first", "_venkatraman_unpaired", "_unpaired_area", "_errors_paired")
} | {
    ("metrics/reliability.py", "_weighted_quantile"): "the calibration bins' quantile "
    "edges (weights summed in score order): not a rank-based number",
    ("report/plot.py", "pr_folds"): "draws a precision-recall table's points in threshold order",
    ("report/plot_scoring.py", "decision_curve"): "draws net benefit in threshold order",
    ("metrics/net_benefit.py", "decision_curve"): "its output rows in threshold order",
    ("report/tables.py", "_decision_curve"): "a summary table's rows in threshold order",
    ("report/tables.py", "top_label"): "each sample's highest-scoring class (the argmax "
    "for the top-label reliability figure): an ordering of one sample's classes",
}


def _orderings() -> set[tuple[str, str]]:
    """(module, function) of every call outside the core that orders scores or sums counts.

    A call counts when it is a running sum (``cum_sum``, ``cumsum``) of something that
    names a class, a count or a weight, or an ordering (``sort``, ``sort_by``, ``rank``,
    ``search_sorted``, ...) by something that names a score or threshold.
    """
    found = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        if module.startswith("core/"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            name, receiver = node.func.attr, ast.unparse(node.func.value)
            args = " ".join(ast.unparse(a) for a in node.args)
            if name in _RUNNING:
                hit = bool(_COUNTS.search(receiver))
            elif name in _ORDERING:
                hit = bool(_SCORES.search(args if node.args and name != "rank" else receiver))
            else:
                continue
            if hit:
                scope: ast.AST = node
                while scope in parents and not isinstance(scope, ast.FunctionDef):
                    scope = parents[scope]
                found.add((module, getattr(scope, "name", "<module>")))
    return found


def test_no_module_outside_the_core_orders_scores_or_sums_counts() -> None:
    assert _orderings() == set(NOT_COUNTS)


def test_the_check_finds_an_ordering_of_scores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The source check is not blind: a module that ranks scores is found."""
    fake = tmp_path / "polaroc"
    (fake / "metrics").mkdir(parents=True)
    (fake / "metrics" / "rogue.py").write_text(
        "def rogue(frame):\n    return frame.select(pl.col('score').rank().sum())\n"
    )
    monkeypatch.setitem(globals(), "PACKAGE", fake)
    assert _orderings() == {("metrics/rogue.py", "rogue")}


# ------------------------------------------------- the NumPy evaluator of replicates


@pytest.mark.parametrize("digits", [None, 1])
def test_the_replicates_evaluator_equals_the_core(digits: int | None) -> None:
    """Each replicate's AUC (core/replicates.py) equals the list evaluator's on its rows."""
    rng = np.random.default_rng(5)
    label = rng.random(80) < 0.4
    score = rng.normal(size=80) + label
    if digits is not None:
        score = np.round(score, digits)
    drawn = draws(np.random.default_rng(2), int(label.sum()), int((~label).sum()), 30)
    got = replicate_aucs(score, label, drawn)
    pos, neg = score[label], score[~label]
    rows = pl.concat(
        pl.DataFrame(
            {
                "b": b,
                "s": np.r_[pos[drawn[0][b]], neg[drawn[1][b]]],
                "y": np.r_[np.ones(label.sum(), bool), np.zeros((~label).sum(), bool)],
            }
        )
        for b in range(30)
    )
    core = rows.group_by("b").agg(pr.auc("s", "y")).sort("b")["auc"].to_numpy()
    assert np.allclose(got, core, rtol=0, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(g=groups())
def test_the_descending_entries_are_the_same_counts(g: pl.DataFrame) -> None:
    """Every formula reads the same numbers from entries in either order (``descending``)."""
    s, y = pl.col("score"), pl.col("label")

    def numbers(descending: bool) -> dict[str, float]:
        c = counts.listed(descending=descending)
        values = pl.struct(
            auc=f.auc(c),
            sauc=f.sauc_parts(c)["sauc"],
            r_pos=f.sauc_parts(c)["r_pos"],
            ks=f.ks(c),
            var=f.delong_variance_of(c),
            ap=f.pair_terms(c)["ap"].sum(),
        )
        entries = counts.in_list(s, y, descending=descending)
        return g.select(entries.list.eval(values).list.first().struct.unnest()).row(0, named=True)

    up, down = numbers(False), numbers(True)
    for name, value in up.items():
        assert down[name] == pytest.approx(value, abs=1e-12, nan_ok=True), name
