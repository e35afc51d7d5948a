"""Every public rank-based number on a handful of awkward logs: the counting core's reference.

Issue 33 moved every rank-based quantity onto one count schema (``polaroc.core.counts``) and
its formulas (``polaroc.core.formulas``). Before the old paths were deleted, this module's
cases were run on the code as it stood (main at 52f9309) and their outputs frozen in
``outputs.parquet`` (``python -m tests.metrics.reference.cases`` writes it; one row per case,
the output as Arrow IPC bytes). ``tests/metrics/test_reference.py`` runs the cases again and
compares them with the frozen outputs to 1e-12.

The logs are small (tens of rows a group) and cover: binary logs without a class column,
with both classes' rows, multiclass logs; case weights (zeros and nulls among them); heavy
ties; NaN, ±inf, −0.0 next to 0.0; null scores and labels; one-class groups; repeats and
data sets. The two defects of issue 33 (``max_metric_point(metric="mcc", weight=)`` at
extreme weight scales, ``smooth_roc(method="density")`` with an infinite score) are not
among the cases: their tests are in ``tests/metrics/test_counting_core.py``.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl

import polaroc as pr

HERE = Path(__file__).resolve().parent
OUTPUTS = HERE / "outputs.parquet"
INF = float("inf")
NAN = float("nan")


# ------------------------------------------------------------------------ logs


def binary_log() -> pl.DataFrame:
    """No class column: 2 data sets × 3 models × 2 repeats × 2 folds, 40 samples a fold.

    Model ``a`` scores distinct normal values, ``b`` rounds them to one decimal (ties),
    ``c`` is uniform with a few repeated values; labels are shared by the models (so the
    log pairs for DeLong's tests); weights are exponential with a few zeros.
    """
    rng = np.random.default_rng(33)
    rows = []
    for dataset in ("d1", "d2"):
        for repeat in (0, 1):
            for fold in (0, 1):
                n = 40
                label = rng.random(n) < 0.4
                base = rng.normal(0.0, 1.0, n) + 0.9 * label
                scores = {
                    "a": base,
                    "b": np.round(base + rng.normal(0.0, 0.5, n), 1),
                    "c": np.round(rng.random(n) + 0.2 * label, 2),
                }
                for model, score in scores.items():
                    w = rng.exponential(1.0, n)
                    w[rng.random(n) < 0.1] = 0.0
                    rows.append(
                        pl.DataFrame(
                            {
                                "dataset": dataset,
                                "model": model,
                                "repeat": repeat,
                                "fold": fold,
                                "sample": np.arange(n),
                                "score": score,
                                "label": label,
                                "w": w,
                            }
                        )
                    )
    return pl.concat(rows)


def awkward_log() -> pl.DataFrame:
    """No class column, one group per awkward case (model × fold)."""
    rng = np.random.default_rng(7)
    n = 30

    def group(model: str, fold: int, score: list[float], label: list[bool | None]) -> pl.DataFrame:
        w = rng.integers(0, 4, len(score)).astype(float)
        return pl.DataFrame(
            {"model": model, "fold": fold, "score": score, "label": label, "w": w},
            schema_overrides={"score": pl.Float64, "label": pl.Boolean, "w": pl.Float64},
        )

    def labels(k: int) -> list[bool | None]:
        return list(rng.random(k) < 0.5)

    def scores(k: int) -> list[float]:
        return list(np.round(rng.normal(0.0, 1.0, k), 1))

    zeros = [-0.0 if i % 2 else 0.0 for i in range(n)]
    groups = [
        group("plain", 0, scores(n), labels(n)),
        group("nan", 0, [*scores(n - 1), NAN], labels(n)),
        group("inf", 0, [INF, -INF, *scores(n - 2)], [True, False, *labels(n - 2)]),
        group("inf", 1, [INF, INF, *scores(n - 2)], [False, True, *labels(n - 2)]),
        group("zero", 0, [*zeros[:10], *scores(n - 10)], [*([True, False] * 5), *labels(n - 10)]),
        group("one_class", 0, scores(n), [True] * n),
        group("nulls", 0, [None, *scores(n - 1)], [True, None, *labels(n - 2)]),
        group("tied", 0, [0.5] * 10 + [0.25] * 10 + [0.75] * 10, labels(n)),
        group("tiny", 0, [0.3, 0.7], [False, True]),
        group("tiny", 1, [0.3, 0.7, 0.5], [True, False, True]),
    ]
    log = pl.concat(groups)
    # a null weight and a zero weight somewhere
    return log.with_columns(
        w=pl.when(pl.int_range(pl.len()) == 3).then(None).otherwise(pl.col("w")).fill_nan(1.0)
    ).with_columns(w=pl.when(pl.col("w") == 0.0).then(0.0).otherwise(pl.col("w")))


def class_log() -> pl.DataFrame:
    """A binary log with both classes' rows (class 0/1), two models, a sample column."""
    rng = np.random.default_rng(11)
    frames = []
    labels = [(rng.random(35) < 0.45).astype(np.int64) for _ in range(3)]
    for model in ("a", "b"):
        for fold in (0, 1, 2):
            n = 35
            label = labels[fold]
            p = 1.0 / (1.0 + np.exp(-(rng.normal(0.0, 1.0, n) + 1.2 * label)))
            if model == "b":
                p = np.round(p, 1)
            w = rng.exponential(1.0, n)
            for cls, score in ((0, 1.0 - p), (1, p)):
                frames.append(
                    pl.DataFrame(
                        {
                            "model": model,
                            "fold": fold,
                            "sample": np.arange(n),
                            "class": cls,
                            "score": score,
                            "label": label,
                            "w": w,
                        }
                    )
                )
    return pl.concat(frames)


def multiclass_log() -> pl.DataFrame:
    """3 classes (strings), 2 data sets × 2 models × 2 repeats × 2 folds, a sample column.

    Fold (d1, a, 0, 1) lacks label ``z``; fold (d2, b, 1, 0) holds a NaN score; model
    ``b``'s scores are rounded (ties); weights are per sample.
    """
    rng = np.random.default_rng(5)
    classes = ["x", "y", "z"]
    frames = []
    for dataset in ("d1", "d2"):
        for model in ("a", "b"):
            for repeat in (0, 1):
                for fold in (0, 1):
                    n = 30
                    label = rng.integers(0, 3, n)
                    if (dataset, model, repeat, fold) == ("d1", "a", 0, 1):
                        label = rng.integers(0, 2, n)
                    w = rng.exponential(1.0, n)
                    raw = rng.normal(0.0, 1.0, (n, 3)) + 1.5 * np.eye(3)[label]
                    prob = np.exp(raw) / np.exp(raw).sum(axis=1, keepdims=True)
                    if model == "b":
                        prob = np.round(prob, 1)
                    for k, cls in enumerate(classes):
                        score = prob[:, k].copy()
                        if (dataset, model, repeat, fold, cls) == ("d2", "b", 1, 0, "y"):
                            score[4] = NAN
                        frames.append(
                            pl.DataFrame(
                                {
                                    "dataset": dataset,
                                    "model": model,
                                    "repeat": repeat,
                                    "fold": fold,
                                    "sample": np.arange(n),
                                    "class": cls,
                                    "score": score,
                                    "label": [classes[i] for i in label],
                                    "w": w,
                                }
                            )
                        )
    return pl.concat(frames)


def finite_binary_log() -> pl.DataFrame:
    """:func:`binary_log` of data set d1 (finite scores: the density smooth's input)."""
    return binary_log().filter(pl.col("dataset") == "d1").drop("dataset")


# ----------------------------------------------------------------------- cases

Case = Callable[[], pl.DataFrame]
KEYS = ("dataset", "model", "repeat", "fold")


def _expressions(log: pl.DataFrame, keys: list[str], weight: str | None) -> pl.DataFrame:
    s, y = "score", "label"
    w = weight
    exprs = [
        pr.auc(s, y, weight=w),
        pr.gini(s, y, weight=w),
        pr.sauc(s, y, weight=w),
        pr.sauc_parts(s, y, weight=w),
        pr.average_precision(s, y, weight=w),
        pr.h_measure(s, y, weight=w),
        pr.h_measure(s, y, severity_ratio=0.5, weight=w).alias("h_measure_sr"),
        pr.ks_statistic(s, y, weight=w),
        pr.partial_auc(s, y, max_fpr=0.3, weight=w),
        pr.partial_auc(s, y, min_fpr=0.1, max_fpr=0.6, standardize=False, weight=w).alias("pauc"),
    ]
    if weight is None:
        exprs += [
            pr.auc_se(s, y),
            pr.auc_se(s, y, method="hanley_mcneil").alias("se_hm"),
            pr.auc_ci(s, y),
            pr.auc_ci(s, y, method="hanley_mcneil", level=0.9).alias("ci_hm"),
        ]
    out = log.group_by(keys).agg(exprs).sort(keys) if keys else log.select(exprs)
    parts = pl.col("sauc_parts").struct.unnest().name.prefix("parts_")
    return out.with_columns(parts).drop("sauc_parts")


def _cases() -> dict[str, tuple[Case, list[str]]]:
    """name -> (the computation, the columns its rows are ordered by within the output)."""
    b, a, cl, mc = binary_log, awkward_log, class_log, multiclass_log
    bk = list(KEYS)
    cases: dict[str, tuple[Case, list[str]]] = {
        "expr_binary": (lambda: _expressions(b(), bk, None), bk),
        "expr_binary_w": (lambda: _expressions(b(), bk, "w"), bk),
        "expr_awkward": (lambda: _expressions(a(), ["model", "fold"], None), ["model", "fold"]),
        "expr_awkward_w": (lambda: _expressions(a(), ["model", "fold"], "w"), ["model", "fold"]),
        "expr_one_group": (lambda: _expressions(b(), [], None), []),
    }

    def table(name: str, fn: Callable[[], pl.LazyFrame], keys: list[str]) -> None:
        cases[name] = (lambda: fn().collect(), keys)

    for tag, log, keys in (
        ("binary", b, bk),
        ("awkward", a, ["model", "fold"]),
        ("class", cl, ["model", "fold"]),
        ("multi", mc, bk),
    ):
        table(f"evaluate_{tag}", lambda log=log: pr.evaluate(log()), keys)
        table(
            f"evaluate_{tag}_collapsed",
            lambda log=log: pr.evaluate(log(), collapse_ties=True),
            keys,
        )
        table(f"evaluate_{tag}_w", lambda log=log: pr.evaluate(log(), weight="w"), keys)
        table(
            f"evaluate_{tag}_w_collapsed",
            lambda log=log: pr.evaluate(log(), weight="w", collapse_ties=True),
            keys,
        )
        pairs = [*keys, "class_i", "class_j"]
        table(f"pairwise_{tag}", lambda log=log: pr.pairwise_auc(log()), pairs)
        table(f"pairwise_{tag}_w", lambda log=log: pr.pairwise_auc(log(), weight="w"), pairs)
        table(f"multiclass_{tag}", lambda log=log: pr.multiclass_auc(log()), keys)
        table(f"multiclass_{tag}_w", lambda log=log: pr.multiclass_auc(log(), weight="w"), keys)
        curve_keys = [*keys, "class"] if tag in ("class", "multi") else keys
        for name, fn in _curve_tables().items():
            table(f"{name}_{tag}", lambda fn=fn, log=log: fn(log()), curve_keys)
    table("evaluate_one_group", lambda: pr.evaluate(b(), by=()), [])
    table("evaluate_by_model", lambda: pr.evaluate(mc(), by=("dataset", "model")), bk[:2])
    grid = [0.1, 0.3, 0.5, 0.7]
    table("roc_grid", lambda: pr.roc_curve(b(), thresholds=grid), bk)
    table("roc_grid_drop", lambda: pr.roc_curve(b(), thresholds=grid, drop_intermediate=True), bk)
    table("roc_grid_w", lambda: pr.roc_curve(b(), thresholds=grid, weight="w"), bk)
    pooled = ["dataset", "model"]
    table("pooled_roc", lambda: pr.pooled_roc(b()), pooled)
    table("pooled_roc_w", lambda: pr.pooled_roc(b(), weight="w"), pooled)
    table("pooled_roc_multi", lambda: pr.pooled_roc(mc()), [*pooled, "class"])
    table("pooled_pr", lambda: pr.pooled_pr_curve(b()), pooled)
    table("pooling_table", lambda: pr.pooling_table(b()), pooled)
    table("pooling_table_awkward", lambda: pr.pooling_table(a()), ["model"])
    table("average_roc_vertical", lambda: pr.average_roc(b(), grid=11), pooled)
    table("average_roc_vertical_w", lambda: pr.average_roc(b(), grid=11, weight="w"), pooled)
    table("average_roc_threshold", lambda: pr.average_roc(b(), method="threshold"), pooled)
    table(
        "average_roc_threshold_grid",
        lambda: pr.average_roc(b(), method="threshold", grid=grid, weight="w"),
        pooled,
    )
    table("average_roc_awkward", lambda: pr.average_roc(a(), grid=6), ["model"])
    for metric in ("f1", "fbeta", "mcc", "cohen_kappa", "balanced_accuracy"):
        table(
            f"max_metric_{metric}",
            lambda metric=metric: pr.max_metric_point(b(), metric=metric, beta=2.0),
            bk,
        )
        table(
            f"max_metric_{metric}_w",
            lambda metric=metric: pr.max_metric_point(b(), metric=metric, beta=2.0, weight="w"),
            bk,
        )
        table(
            f"max_metric_{metric}_awkward",
            lambda metric=metric: pr.max_metric_point(a(), metric=metric, weight="w"),
            ["model", "fold"],
        )
    table("youden_grid", lambda: pr.youden_point(b(), thresholds=grid), bk)
    table(
        "neyman_pearson_spec",
        lambda: pr.neyman_pearson_point(b(), min_specificity=0.8, cost_fn=3.0),
        bk,
    )
    table("min_cost_normalized", lambda: pr.min_cost_point(b(), cost_fp=2.0, normalize=True), bk)
    fb = finite_binary_log
    fkeys = ["model", "repeat", "fold"]
    table("smooth_binormal", lambda: pr.smooth_roc(b(), n=7), bk)
    table("smooth_binormal_w", lambda: pr.smooth_roc(b(), n=7, weight="w"), bk)
    table("smooth_binormal_awkward", lambda: pr.smooth_roc(a(), n=5), ["model", "fold"])
    table("smooth_density", lambda: pr.smooth_roc(fb(), method="density", n=9), fkeys)
    table("roc_ci", lambda: pr.roc_ci(fb(), n_boot=30, seed=3), fkeys)
    table(
        "roc_ci_sens",
        lambda: pr.roc_ci(fb(), sensitivities=[0.2, 0.5, 0.9], n_boot=30, seed=4),
        fkeys,
    )
    table("roc_ci_awkward", lambda: pr.roc_ci(a(), n_boot=20, seed=5), ["model", "fold"])
    table("coords_ci", lambda: pr.coords_ci(fb(), [0.0, 0.5], n_boot=30, seed=6), fkeys)
    table(
        "roc_ci_class",
        lambda: pr.roc_ci(cl(), positive_class=1, n_boot=20, seed=7),
        ["model", "fold"],
    )
    for paired in (True, False):
        tag = "paired" if paired else "unpaired"
        table(
            f"delong_{tag}",
            lambda paired=paired: pr.delong_test(fb(), "a", "b", paired=paired, by="fold"),
            ["fold"],
        )
        table(
            f"bootstrap_test_{tag}",
            lambda paired=paired: pr.bootstrap_test(
                fb(), "a", "c", paired=paired, n_boot=50, seed=1
            ),
            [],
        )
        table(
            f"venkatraman_{tag}",
            lambda paired=paired: pr.venkatraman_test(
                fb(), "b", "c", paired=paired, n_perm=30, seed=2
            ),
            [],
        )
    table("delong_class", lambda: pr.delong_test(cl(), "a", "b", positive_class=1), [])
    table("delong_omnibus", lambda: pr.delong_omnibus(fb(), by="fold"), ["fold"])
    table("delong_omnibus_two", lambda: pr.delong_omnibus(fb(), models=["a", "c"]), [])
    table(
        "bootstrap_auc",
        lambda: pr.bootstrap(fb(), n_boot=20, seed=1, metrics=("auc", "sauc")),
        fkeys,
    )
    for tag, log in (("binary", b), ("multi", mc)):
        cases[f"distributed_{tag}"] = (
            lambda log=log: _distributed(log()),
            bk,
        )
    return cases


def _curve_tables() -> dict[str, Callable[[pl.DataFrame], pl.LazyFrame]]:
    return {
        "roc": lambda log: pr.roc_curve(log),
        "roc_drop": lambda log: pr.roc_curve(log, drop_intermediate=True),
        "roc_w": lambda log: pr.roc_curve(log, weight="w"),
        "pr_curve": lambda log: pr.pr_curve(log),
        "pr_curve_w": lambda log: pr.pr_curve(log, weight="w"),
        "threshold_table": lambda log: pr.threshold_table(log),
        "threshold_table_w": lambda log: pr.threshold_table(log, weight="w"),
        "det": lambda log: pr.det_curve(log),
        "det_w": lambda log: pr.det_curve(log, weight="w"),
        "gain": lambda log: pr.gain_curve(log),
        "lift_w": lambda log: pr.lift_curve(log, weight="w"),
        "youden": lambda log: pr.youden_point(log, cost_fp=2.0),
        "closest_topleft": lambda log: pr.closest_topleft_point(log),
        "neyman_pearson": lambda log: pr.neyman_pearson_point(log, min_sensitivity=0.7),
        "min_cost": lambda log: pr.min_cost_point(log, cost_fn=3.0),
    }


def _distributed(log: pl.DataFrame) -> pl.DataFrame:
    """``pr.distributed.evaluate`` on the Polars engine, every group a big one."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = f"{folder}/log.parquet"
        log.write_parquet(path)
        out = pr.distributed.evaluate(path, engine="polars", max_group_rows=25, partitions=3)
    return out


CASES = _cases()


def run(name: str) -> pl.DataFrame:
    """The case's output, its rows in a fixed order (the case's keys, stably)."""
    fn, keys = CASES[name]
    out = fn()
    present = [k for k in keys if k in out.columns]
    return out.sort(present, maintain_order=True, nulls_last=True) if present else out


def to_bytes(frame: pl.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.write_ipc(buffer)
    return buffer.getvalue()


def frozen() -> dict[str, pl.DataFrame]:
    """The frozen outputs, by case name."""
    table = pl.read_parquet(OUTPUTS)
    return {
        name: pl.read_ipc(io.BytesIO(data))
        for name, data in zip(table["case"], table["output"], strict=True)
    }


def write() -> None:
    """Run every case on the code as it is and freeze the outputs (the reference)."""
    names = sorted(CASES)
    outputs = [to_bytes(run(name)) for name in names]
    pl.DataFrame(
        {"case": names, "output": outputs}, schema={"case": pl.String, "output": pl.Binary}
    ).write_parquet(OUTPUTS, compression="zstd", compression_level=19)
    print(f"wrote {len(names)} cases to {OUTPUTS}", file=sys.stderr)


if __name__ == "__main__":
    write()
