"""The full per-fold table (``pr.evaluate``) against ``pr.auc`` alone, on a binary log.

``pr.evaluate`` computes n, the AUC, sAUC, the error at 0.5, DeLong's and Hanley &
McNeil's standard errors and the null counts from one ordering per group. It is
compared with ``pr.auc`` alone and with the same columns as separate expressions in
one ``group_by`` (each expression orders the group again). Every column must agree
with the expressions on every group to 1e-9 first.

Two floors are timed with them, each checked against the expressions first: the AUC with
DeLong's standard error, then with the sAUC too, computed from one sort of each group in
the cheapest formulation found (mid-ranks among all rows and within each class; see
:func:`one_sort_sums`). They are not a second implementation of the table, only a measure
of what its first columns cost at best in Polars expressions.

Run: python -m benchmarks.bench_evaluate [--rows 10000000] [--repeat 9]
"""

from __future__ import annotations

import argparse
import statistics

import polars as pl

import polaroc as pr
from benchmarks.common import Timing, as_dict, assert_agree, binary_log, markdown, time_all
from polaroc.core.counts import sorted_rows

BY = ["model", "fold"]
POLAROC = "pr.auc in group_by"
EVALUATE = "pr.evaluate (all columns)"


def expressions() -> list[pl.Expr]:
    s, y = "score", "label"
    return [
        pr.auc(s, y),
        pr.sauc(s, y),
        pr.error(s, y),
        pr.auc_se(s, y).alias("auc_se_delong"),
        pr.auc_se(s, y, method="hanley_mcneil").alias("auc_se_hanley_mcneil"),
    ]


_E = pl.element()
_F = _E.struct.field


def one_sort_sums(*, sauc: bool) -> pl.Expr:
    """Per group, from one sort: ``{u, qq, tt, p, n}`` (and ``s`` with ``sauc``).

    With r a row's mid-rank among the group's rows and r' its mid-rank within its class,
    z = r − r' counts the other class's rows below it (ties ½): for a positive, n₋ times
    DeLong's placement value V₁₀; for a negative, n₊ times 1 − V₀₁. ``u`` is the sum of
    the positives' mid-ranks, ``qq``/``tt`` the positives'/negatives' Σz², and ``s`` =
    Σ₊ x·z − Σ₋ x·(n₊ − z), Wu & Flach's sAUC times n₊n₋ (a tied pair adds 0 either way;
    finite scores only, no centring: a floor, not the table's rule).
    """
    x, y = _F("threshold").set_sorted(), _F("positive")
    ranked = sorted_rows(pl.col("score"), pl.col("label")).list.eval(
        _E.struct.with_fields(r=x.rank("average"))
    )
    r = _F("r")

    def z(side: pl.Expr) -> pl.Expr:
        return r.filter(side) - x.filter(side).rank("average")

    p = y.sum().cast(pl.Float64)
    fields = {
        "u": r.filter(y).sum(),
        "qq": z(y).pow(2).sum(),
        "tt": z(~y).pow(2).sum(),
        "p": p,
        "n": pl.len().cast(pl.Float64),
    }
    if sauc:
        fields["s"] = (x.filter(y) * z(y)).sum() - (x.filter(~y) * (p - z(~y))).sum()
    return ranked.list.eval(pl.struct(**fields)).list.first()


def from_one_sort(table: pl.DataFrame) -> pl.DataFrame:
    """``auc``, ``auc_se_delong`` (and ``sauc``) from :func:`one_sort_sums`' fields."""
    p, n = pl.col("p"), pl.col("n") - pl.col("p")
    u = pl.col("u") - p * (p + 1) / 2
    s10 = (pl.col("qq") / n**2 - (u / n) ** 2 / p) / (p - 1)
    s01 = (pl.col("tt") / p**2 - ((p * n - u) / p) ** 2 / n) / (n - 1)
    sauc = [(pl.col("s") / (p * n)).alias("sauc")] if "s" in table.columns else []
    return table.select(
        *BY,
        (u / (p * n)).alias("auc"),
        (s10 / p + s01 / n).sqrt().alias("auc_se_delong"),
        *sauc,
    )


def floor(df: pl.DataFrame, *, sauc: bool) -> pl.DataFrame:
    return df.group_by(BY).agg(one_sort_sums(sauc=sauc).alias("_s")).unnest("_s")


def check(df: pl.DataFrame) -> None:
    table = pr.evaluate(df).collect()
    plain = df.group_by(BY).agg(*expressions())
    for column in ("auc", "sauc", "error", "auc_se_delong", "auc_se_hanley_mcneil"):
        assert_agree(as_dict(plain, column), as_dict(table, column), f"pr.evaluate's {column}")
    lean = from_one_sort(floor(df, sauc=True))
    for column in ("auc", "sauc", "auc_se_delong"):
        assert_agree(as_dict(plain, column), as_dict(lean, column), f"the floor's {column}")
    # the log's scores are not probabilities (brier and log_loss are null): check those
    # columns on the same log with its scores mapped into (0, 1)
    probabilities = df.with_columns(score=1.0 / (1.0 + (-pl.col("score")).exp()))
    table = pr.evaluate(probabilities).collect()
    s, y = "score", "label"
    plain = probabilities.group_by(BY).agg(pr.brier_score(s, y).alias("brier"), pr.log_loss(s, y))
    for column in ("brier", "log_loss"):
        assert_agree(as_dict(plain, column), as_dict(table, column), f"pr.evaluate's {column}")


def run(rows: int, repeat: int, distinct: int | None = None) -> str:
    df = binary_log(rows, distinct=distinct)
    check(df)
    methods = {
        "per-group sort (floor)": lambda: df.group_by(BY).agg(
            pl.col("score").sort().gather(pl.len() // 2)
        ),
        POLAROC: lambda: df.group_by(BY).agg(pr.auc("score", "label")),
        "floor: AUC + DeLong SE, one sort": lambda: floor(df, sauc=False),
        "floor: AUC + DeLong SE + sAUC, one sort": lambda: floor(df, sauc=True),
        EVALUATE: lambda: pr.evaluate(df).collect(),
        "the same five metrics as expressions": lambda: df.group_by(BY).agg(*expressions()),
    }
    timings = time_all(methods, repeat)
    kind = "distinct scores" if distinct is None else f"{distinct:,} distinct score values"
    title = f"pr.evaluate against pr.auc alone: binary, {rows:,} rows, 80 groups, {kind}"
    return markdown(title, timings, POLAROC) + "\n\n" + paired_ratio(timings)


def paired_ratio(timings: list[Timing]) -> str:
    """The ratio of ``pr.evaluate`` to ``pr.auc`` within each round (both ran back to back)."""
    runs = {t.name: t.runs for t in timings}
    ratios = [e / a for e, a in zip(runs[EVALUATE], runs[POLAROC], strict=True)]
    return (
        f"Within each round, pr.evaluate ÷ pr.auc: median {statistics.median(ratios):.2f}, "
        f"range {min(ratios):.2f}–{max(ratios):.2f} over {len(ratios)} rounds."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    print(run(args.rows, args.repeat))
    print()
    print(run(args.rows, args.repeat, 1000))


if __name__ == "__main__":
    main()
