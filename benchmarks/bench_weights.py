"""Case weights and average precision: their cost against the plain per-group AUC.

Methods, on the log of ``bench_binary`` (``rows`` rows in 80 (model, fold) groups)
with a case weight per row (exponential, mean 1):

* ``pr.auc`` in ``group_by().agg()`` (the baseline);
* ``pr.auc(weight=...)``: targets within 1.3× of the baseline;
* ``pr.average_precision``, unweighted and weighted: targets within 1.5× of ``pr.auc``;
* scikit-learn ``roc_auc_score`` / ``average_precision_score`` with ``sample_weight``
  looped over the groups (``partition_by``).

Every polaroc result must agree with scikit-learn's on every group to 1e-9 before a
time is reported.

Floors of the weighted AUC, each the cheapest Polars formulation found for one step (the
contract's checks left out; each that computes an AUC agrees with scikit-learn first):

* the rows sorted by score with their labels and weights (``sort_by`` in the group's list);
* that sort and the positives' weight times the negatives' running weight (exact without
  ties: on distinct scores only);
* that and the tie runs (the running sums at each run's end): exact on any scores;
* on tied scores, the issue's "weighted count of distinct values": the (score, label)
  weights summed in the group's list (window sums, one row per pair), then sorted.

Run: python -m benchmarks.bench_weights [--rows 10000000] [--repeat 5] [--ties 1000]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np
import polars as pl
from sklearn.metrics import average_precision_score, roc_auc_score

import polaroc as pr
from benchmarks.common import as_dict, assert_agree, binary_log, markdown, time_all
from polaroc.core.counts import sorted_rows

BY = ["model", "fold"]
AUC = "pr.auc in group_by"


def weighted_log(rows: int, distinct: int | None) -> pl.DataFrame:
    df = binary_log(rows, distinct=distinct)
    weight = np.random.default_rng(1).exponential(size=rows)
    return df.with_columns(w=pl.Series(weight))


def polaroc(df: pl.DataFrame, metric: Callable[..., pl.Expr], weight: str | None) -> pl.DataFrame:
    return df.group_by(BY).agg(metric("score", "label", weight=weight).alias("value"))


def sklearn_loop(df: pl.DataFrame, metric: Callable[..., float], weight: str | None) -> dict:
    return {
        key: metric(
            part["label"].to_numpy(),
            part["score"].to_numpy(),
            sample_weight=None if weight is None else part[weight].to_numpy(),
        )
        for key, part in df.partition_by(BY, as_dict=True).items()
    }


_E = pl.element()
_F = _E.struct.field


def _sorted_rows() -> pl.Expr:
    """The package's ordering of the weighted AUC: ``{threshold, positive, weight}`` by score."""
    return sorted_rows(pl.col("score"), pl.col("label"), pl.col("w"))


def _pos_neg() -> tuple[pl.Expr, pl.Expr]:
    y, w = _F("positive"), _F("weight")
    return pl.when(y).then(w).otherwise(0.0), pl.when(y).then(0.0).otherwise(w)


def floor_without_ties() -> pl.Expr:
    """Σ₊ w·(negatives' weight below) / (W₊W₋): the weighted AUC when no score is tied."""
    pos, neg = _pos_neg()
    value = (pos * neg.cum_sum()).sum() / (pos.sum() * neg.sum())
    return _sorted_rows().list.eval(value).list.first()


def floor_with_ties() -> pl.Expr:
    """The same read at the tie runs' ends: Σ_r P_r (C_{r−1} + C_r) / (2 W₊W₋)."""
    pos, neg = _pos_neg()
    x = _F("threshold")
    runs = pl.struct(cneg=neg.cum_sum(), cpos=pos.cum_sum(), last=x.ne_missing(x.shift(-1)))
    cneg, cpos = _F("cneg"), _F("cpos")
    u = ((cpos - cpos.shift(1, fill_value=0.0)) * (cneg.shift(1, fill_value=0.0) + cneg)).sum()
    value = u / (2.0 * cpos.last() * cneg.last())
    ends = _sorted_rows().list.eval(runs).list.eval(_E.filter(_F("last")))
    return ends.list.eval(value).list.first()


def counted_then_sorted() -> pl.Expr:
    """The weights of each distinct (score, label) summed in the group's list, sorted."""
    rows = pl.struct(x=pl.col("score"), y=pl.col("label"), w=pl.col("w")).implode()
    pair = [_F("x"), _F("y")]
    counted = pl.struct(
        x=_F("x").first().over(pair, mapping_strategy="explode"),
        w=_F("w").sum().over(pair, mapping_strategy="explode"),
    )
    return rows.list.eval(counted).list.eval(_E.sort_by(_F("x"))).list.len()


def floor(df: pl.DataFrame, value: pl.Expr) -> pl.DataFrame:
    return df.group_by(BY).agg(value.alias("value"))


def check(df: pl.DataFrame) -> None:
    """Every polaroc method agrees with scikit-learn on every group (1e-9)."""
    for ours, theirs in ((pr.auc, roc_auc_score), (pr.average_precision, average_precision_score)):
        for weight in (None, "w"):
            got = as_dict(polaroc(df, ours, weight), "value")
            name = f"scikit-learn {theirs.__name__} (weight={weight})"
            assert_agree(got, sklearn_loop(df, theirs, weight), name)
    reference = sklearn_loop(df, roc_auc_score, "w")
    floors = [floor_with_ties()]
    if df["score"].n_unique() == df.height:
        floors.append(floor_without_ties())
    for value in floors:
        assert_agree(as_dict(floor(df, value), "value"), reference, "a weighted AUC floor")


def run(rows: int, repeat: int, distinct: int | None) -> str:
    df = weighted_log(rows, distinct)
    check(df)
    floors = {"floor: + tie runs (no checks)": lambda: floor(df, floor_with_ties())}
    if distinct is None:
        floors["floor: + running sum (no ties, no checks)"] = lambda: floor(
            df, floor_without_ties()
        )
    else:
        floors["weighted count of distinct values, then sorted"] = lambda: floor(
            df, counted_then_sorted()
        )
    methods = {
        AUC: lambda: polaroc(df, pr.auc, None),
        "pr.auc(weight=w)": lambda: polaroc(df, pr.auc, "w"),
        "floor: rows sorted with their weights": lambda: floor(df, _sorted_rows().list.len()),
        **floors,
        "pr.average_precision": lambda: polaroc(df, pr.average_precision, None),
        "pr.average_precision(weight=w)": lambda: polaroc(df, pr.average_precision, "w"),
        "scikit-learn roc_auc_score(sample_weight) loop": lambda: sklearn_loop(
            df, roc_auc_score, "w"
        ),
        "scikit-learn average_precision_score(sample_weight) loop": lambda: sklearn_loop(
            df, average_precision_score, "w"
        ),
    }
    slow = {name: max(2, repeat // 2) for name in methods if name.startswith("scikit")}
    timings = time_all(methods, repeat, slow=slow)
    kind = "distinct scores" if distinct is None else f"{distinct:,} distinct score values"
    title = f"Weighted AUC and average precision: {rows:,} rows, 80 groups, {kind}"
    return markdown(title, timings, AUC)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--ties", type=int, default=1000, help="distinct values of the tied log")
    args = parser.parse_args()
    print(run(args.rows, args.repeat, None))
    print()
    print(run(args.rows, args.repeat, args.ties))


if __name__ == "__main__":
    main()
