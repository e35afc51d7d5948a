"""DeLong's structural components, their (clustered) covariance, and Hand & Till's M's components.

An AUC — and Hand & Till's (2001) M, a linear combination of the two-sample
U-statistics A(i|j) — is a mean of each sample's *structural component* h(x): for one
AUC, DeLong, DeLong & Clarke-Pearson's (1988) placement value (the share of the other
class a sample outranks, ties ½); for M, the sum of a sample's placement values in every
direction A(i|j) weighted by that direction's coefficient in M. Every variance polaroc
reports for a rank statistic is one bilinear formula on those components
(:func:`structural_covariance`): with θ_k the mean of h over the label-k samples,
N_k their number, E_ck = Σ_{x in cluster c, label k} (h(x) − θ_k)/N_k, I_k the clusters
holding a label-k sample and I all clusters,

    Cov(a, b) = Σ_k I_k/(I_k − 1) Σ_c E^a_ck E^b_ck
                + I/(I − 1) Σ_c [(Σ_k E^a_ck)(Σ_k E^b_ck) − Σ_k E^a_ck E^b_ck].

With every sample its own cluster the second term vanishes and the first is
Σ_k s²_k/N_k (s²_k the sample variance of h over label k): DeLong's variance for one
AUC (two labels, one direction), M's variance for several. With two labels, one
direction and clusters it is Obuchowski's (1997, "Nonparametric analysis of clustered
ROC curve data", Biometrics 53:567–578, eq. 3–6) variance.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from polaroc.core import counts
from polaroc.core import formulas as f
from polaroc.core.counts import GID, Counts
from polaroc.core.names import CLASS, LABEL, POSITIVE, SCORE, WEIGHT

__all__ = [
    "COMPONENT",
    "m_coefficients",
    "m_components",
    "rank_placements",
    "structural_covariance",
]

COMPONENT = "_pr_h"  # a sample's structural component for M


# ------------------------------------------------------------------ the covariance


_E = pl.element()
_F = _E.struct.field


def _run_totals(x: pl.Expr, end: pl.Expr) -> pl.Expr:
    """Each row's run total of ``x`` (rows in runs, ``end`` marking each run's last row).

    A running sum differenced at the runs' ends: no window, so that it runs inside a
    list (and so in an aggregation) as well as in a ``select``.
    """
    running = x.cum_sum()
    before = pl.when(end).then(running).shift(1).forward_fill().fill_null(0.0)
    return pl.when(end).then(running - before).backward_fill()


def _step(rows: pl.Expr, **fields: pl.Expr) -> pl.Expr:
    """``rows`` (a list of structs) with ``fields`` added, computed on its materialised fields.

    Each step's fields are read by the next as stored values: no expression is evaluated
    twice (Polars eliminates no common subexpression inside a list).
    """
    return rows.list.eval(pl.struct([_E.struct.unnest(), *(v.alias(n) for n, v in fields.items())]))


def structural_covariance(
    h_a: pl.Expr, h_b: pl.Expr, label: pl.Expr, cluster: pl.Expr | None = None
) -> pl.Expr:
    """Cov(mean h_a, mean h_b) over a group's samples, clusters optional (the module's formula).

    An aggregating expression over one row per sample (a group of ``group_by().agg``,
    or a ``select``): ``h_a``/``h_b`` the samples' structural components under two
    statistics (the same expression for a variance), ``label`` their label (the
    strata k), ``cluster`` their cluster id (``None``: each sample its own). Null when a
    label has fewer than two clusters (samples), there are fewer than two clusters or
    fewer than two labels. The rows are ordered by (label, cluster, h_a, h_b) first, so
    that the sums take the same order whatever order the rows came in.
    """
    k, c, a, b = _F("k"), _F("c"), _F("a"), _F("b")
    clustered = cluster is not None
    given = {"k": label, "c": cluster, "a": h_a, "b": h_b}
    given = {n: v for n, v in given.items() if v is not None}
    rows = (
        pl.struct([v.alias(n) for n, v in given.items() if v is not None])
        .implode()
        .list.eval(_E.sort_by([_F(n) for n in given]))
    )
    end_k = k.ne_missing(k.shift(-1))
    ends = {"end_k": end_k, "end_kc": end_k | c.ne_missing(c.shift(-1))} if clustered else {}
    rows = _step(rows, **(ends or {"end_k": end_k}), one=a.is_not_null().cast(pl.Float64))
    end_k, end_kc = _F("end_k"), _F("end_kc") if clustered else _F("end_k")
    rows = _step(
        rows,
        n_k=_run_totals(_F("one"), end_k),
        s_a=_run_totals(a, end_k),
        s_b=_run_totals(b, end_k),
    )
    n_k = _F("n_k")
    # (h − θ_k)/N_k per sample
    rows = _step(rows, e_a=(a - _F("s_a") / n_k) / n_k, e_b=(b - _F("s_b") / n_k) / n_k)
    e_a, e_b = _F("e_a"), _F("e_b")
    if clustered:  # E_ck: a cell's sum of e, at its last row
        rows = _step(rows, cell_a=_run_totals(e_a, end_kc), cell_b=_run_totals(e_b, end_kc))
        product = pl.when(end_kc).then(_F("cell_a") * _F("cell_b")).otherwise(0.0)
        rows = _step(rows, product=product)
        rows = _step(
            rows,
            i_k=_run_totals(end_kc.cast(pl.Float64), end_k),
            cells=_run_totals(_F("product"), end_k),
        )
    else:  # every sample a cell of its own
        rows = _step(rows, i_k=n_k, cells=_run_totals(e_a * e_b, end_k), product=e_a * e_b)
    i_k, cells = _F("i_k"), _F("cells")
    within = pl.when(end_k).then(i_k / (i_k - 1.0) * cells).otherwise(0.0).sum()
    few = pl.when(end_k).then(i_k).min() < 2
    labels = end_k.cast(pl.Float64).sum()
    rows = _step(rows, within=within, few=few | (labels < 2), all_cells=_F("product").sum())
    if clustered:  # Σ_k E_ck is the cluster's sum of e over its samples: the rows by cluster
        by_cluster = rows.list.eval(_E.sort_by(c, k, a, b))
        end_c = c.ne_missing(c.shift(-1))
        rows = _step(by_cluster, end_c=end_c)
        rows = _step(rows, g_a=_run_totals(e_a, _F("end_c")), g_b=_run_totals(e_b, _F("end_c")))
        g = pl.when(_F("end_c")).then(_F("g_a") * _F("g_b")).otherwise(0.0).sum()
        i_all = _F("end_c").cast(pl.Float64).sum()
        cross = g - _F("all_cells").first()
    else:
        i_all, cross = _F("one").sum(), pl.lit(0.0)
    value = _F("within").first() + i_all / (i_all - 1.0) * cross
    defined = ~_F("few").first() & (i_all > 1)
    return rows.list.eval(pl.when(defined).then(value)).list.first()


# ------------------------------------------------------------- one AUC's components


def rank_placements(score: pl.Expr, positive: pl.Expr) -> pl.Expr:
    """Each row's DeLong placement value (V₁₀ for a positive, V₀₁ for a negative), by ranks.

    Sun & Xu (2014): a positive's mid-rank among all scores minus its mid-rank among the
    positives is the negatives it outranks (ties ½), and likewise for a negative. For an
    aggregation (no window): ``score`` and ``positive`` without nulls.
    """
    everyone = score.rank("average")
    among_pos = pl.when(positive).then(score).rank("average")
    among_neg = pl.when(~positive).then(score).rank("average")
    n_pos = positive.sum().cast(pl.Float64)
    n_neg = (~positive).sum().cast(pl.Float64)
    v10 = (everyone - among_pos) / n_neg
    v01 = 1.0 - (everyone - among_neg) / n_pos
    return pl.when(positive).then(v10).otherwise(v01)


# ---------------------------------------------------------------------- M's components


def m_coefficients(dirs: pl.LazyFrame, by: Sequence[str]) -> pl.LazyFrame:
    """Each direction's coefficient in M, from :func:`polaroc.core.blocks.directions`.

    Per group, M is the mean over the label pairs holding a computable direction of the
    mean of its directions (Hand & Till 2001, eq. 7; :func:`polaroc.core.blocks.m_table`),
    so A(i|j) weighs 1/(pairs × directions of its pair). Columns: by…, ``_pr_class`` (i),
    ``_pr_label`` (j), ``_pr_w`` (the coefficient), ``_pr_wi`` (Σ of the class-i
    block's coefficients) and ``n_j`` (label-j rows in the block).
    """
    by = list(by)
    c, lab = pl.col(CLASS), pl.col(LABEL)
    lo = pl.when(c < lab).then(c).otherwise(lab)
    hi = pl.when(c < lab).then(lab).otherwise(c)
    held = dirs.filter(pl.col("n_i") > 0).with_columns(_pr_lo=lo, _pr_hi=hi)
    pair = [*by, "_pr_lo", "_pr_hi"]
    per_pair = held.group_by(pair).agg(pl.len().cast(pl.Float64).alias("_pr_dirs"))
    n_pairs = per_pair.group_by(by).agg(pl.len().cast(pl.Float64).alias("_pr_pairs"))
    on = dict(how="left", nulls_equal=True)
    w = 1.0 / (pl.col("_pr_pairs") * pl.col("_pr_dirs"))
    table = (
        held.join(per_pair, on=pair, **on)  # type: ignore[arg-type]
        .join(n_pairs, on=by, **on)  # type: ignore[arg-type]
        .select(*by, CLASS, LABEL, "n_j", w.alias("_pr_w"))
    )
    return table.with_columns(pl.col("_pr_w").sum().over([*by, CLASS]).alias("_pr_wi"))


def _placement(c: Counts) -> pl.Expr:
    v10, v01 = f.placements(c)
    return pl.when(pl.col(POSITIVE)).then(v10).otherwise(v01)


def m_components(
    rows: pl.LazyFrame, coefficients: pl.LazyFrame, by: Sequence[str], sample: Sequence[str]
) -> pl.LazyFrame:
    """Per (group, sample): its label and its structural component for M (``_pr_h``).

    ``rows``: the usable class rows (by…, ``sample``…, ``_pr_class``, ``_pr_label``,
    ``_pr_score``); ``coefficients``: :func:`m_coefficients`. Counted by the table
    evaluator once per (group, class i) block (:func:`polaroc.core.counts.table`), a
    label-j row weighing u = w_ij/N(i, j) and a label-i row 1: a label-i row's
    weighted V₁₀ times Σ_j w_ij is Σ_j w_ij × (share of label-j rows it outranks, ties
    ½), a label-j row's V₀₁ times w_ij its share of label-i rows outranking it. A
    sample's component sums its rows' (exactly: the same bits in any order); a row in no
    direction (weight 0) adds 0, and keeps its sample in the table.
    """
    by, sample = list(by), list(sample)
    block = [*by, CLASS]
    positive = pl.col(LABEL) == pl.col(CLASS)
    weighted = rows.join(coefficients, on=[*block, LABEL], how="left", nulls_equal=True)
    wi = pl.col("_pr_wi").max().over(block)  # a label-i row has no direction of its own
    weighted = weighted.with_columns(
        positive.alias(POSITIVE),
        pl.when(positive).then(wi).otherwise(pl.col("_pr_w")).alias("_pr_times"),
        pl.when(positive)
        .then(pl.when(wi > 0).then(1.0))
        .otherwise(pl.col("_pr_w") / pl.col("n_j").cast(pl.Float64))
        .fill_null(0.0)  # a row in no direction: counted for nothing, its sample still kept
        .alias(WEIGHT),
    )
    # a NaN score in a direction makes that A(i|j), so M, NaN: its sample's h is NaN
    # (the counts rank NaN above every number, a finite placement)
    weighted = weighted.with_columns(
        (pl.col(SCORE).is_nan() & (pl.col(WEIGHT) > 0.0)).alias("_pr_nan_row")
    )
    # one entry per row (no collapse), carrying its sample and factor: summed per sample
    # below, with no join of the entries back to the rows
    carried = [*sample, LABEL, "_pr_times", "_pr_nan_row"]
    groups, entries = counts.table(
        weighted.select(*block, *carried, SCORE, POSITIVE, WEIGHT),
        block,
        usable=pl.lit(True),
        weighted=True,
        carry=carried,
    )
    part = _placement(counts.columns(weighted=True)) * pl.col("_pr_times")
    parts = entries.select(GID, *sample, LABEL, "_pr_nan_row", part.alias("_pr_part"))
    parts = parts.join(groups.select(GID, *by), on=GID).drop(GID)
    # A sample's parts, each in [0, 1] and summing to at most 1 (Σ w = 1 over M's
    # directions), added exactly as integer multiples of 2^-60: the same bits in whatever
    # order a sample's rows come (a NaN score in a direction makes h NaN).
    grid = 2.0**60
    value = pl.col("_pr_part")
    summed = parts.group_by([*by, *sample]).agg(
        pl.col(LABEL).first(),
        (value * grid).cast(pl.Int64, strict=False).sum().alias("_pr_units"),
        (value.is_nan() | pl.col("_pr_nan_row")).any().alias("_pr_nan"),
    )
    h = pl.when(pl.col("_pr_nan")).then(float("nan")).otherwise(pl.col("_pr_units") / grid)
    return summed.select(*by, *sample, LABEL, h.alias(COMPONENT))
