"""The bootstrap test's spread: AUC_a − AUC_b over every replicate of one group at once.

The replicates' AUCs come from the core's declared NumPy evaluator
(:mod:`polaroc.core.replicates`); called once per group on that group's rows.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from polaroc.core.replicates import (
    cluster_draws,
    draws,
    replicate_aucs,
    weighted_replicate_aucs,
)

__all__ = ["boot_auc_sd"]


def boot_auc_sd(rows: pl.Series, n_boot: int, seed: int, paired: bool) -> pl.Series:
    """``sd_diff`` and ``n_boot`` of AUC_a − AUC_b over the replicates of one group.

    ``rows`` is a struct Series of the group's rows, in a fixed sample order, with
    fields ``a`` (model a's score; null on model b's rows when unpaired), ``b``,
    ``positive`` and ``key`` (a hash of the group, the same on every row, which seeds
    the group's draws with ``seed``). Paired: both models read the same draws;
    unpaired: model a's rows (non-null ``a``) and model b's are drawn independently.
    Clustered, the struct also holds ``stratum`` and ``unit`` (each row's cluster: see
    :func:`polaroc.core.replicates.cluster_draws`) and the replicates draw whole
    clusters. A group without positives or negatives on a side gives nulls, one with a
    NaN score NaN; ``n_boot`` counts the replicates whose difference is defined.
    """
    out = pl.Series([{"sd_diff": None, "n_boot": 0}])
    if len(rows) == 0:
        return out
    a = rows.struct.field("a").to_numpy()
    b = rows.struct.field("b").to_numpy()
    positive = rows.struct.field("positive").to_numpy().astype(bool)
    key = int(rows.struct.field("key")[0])
    rng = np.random.default_rng([seed, key])
    if paired:
        sides = [(a, positive), (b, positive)]
    else:
        on_a = rows.struct.field("a").is_not_null().to_numpy()
        sides = [(a[on_a], positive[on_a]), (b[~on_a], positive[~on_a])]
    if any(p.all() or not p.any() for _, p in sides):
        return out
    if any(np.isnan(s).any() for s, _ in sides):
        return pl.Series([{"sd_diff": float("nan"), "n_boot": n_boot}])
    if "unit" in rows.struct.fields:
        stratum = rows.struct.field("stratum").to_numpy()
        unit = rows.struct.field("unit").to_numpy()
        if paired:
            times = cluster_draws(rng, stratum, unit, n_boot)
            aucs = [weighted_replicate_aucs(s, p, times) for s, p in sides]
        else:
            aucs = [
                weighted_replicate_aucs(s, p, cluster_draws(rng, stratum[on], unit[on], n_boot))
                for (s, p), on in zip(sides, (on_a, ~on_a), strict=True)
            ]
    elif paired:
        drawn = draws(rng, int(positive.sum()), int((~positive).sum()), n_boot)
        aucs = [replicate_aucs(s, p, drawn) for s, p in sides]
    else:
        aucs = [
            replicate_aucs(s, p, draws(rng, int(p.sum()), int((~p).sum()), n_boot))
            for s, p in sides
        ]
    diff = aucs[0] - aucs[1]
    diff = diff[~np.isnan(diff)]
    sd = float(np.std(diff, ddof=1)) if diff.size > 1 else None
    return pl.Series([{"sd_diff": sd, "n_boot": diff.size}])
