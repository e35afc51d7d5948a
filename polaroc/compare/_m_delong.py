"""DeLong's tests of Hand & Till's M between models on a log of more than two classes.

M is a linear combination of the two-sample U-statistics A(i|j) (Hand & Till 2001,
eq. 7), so each sample's structural component for M
(:func:`polaroc.core.structural.m_components`) has mean-like behaviour exactly as a
placement value has for one AUC (DeLong, DeLong & Clarke-Pearson 1988): the
covariance of two models' M on the same samples is the bilinear formula of
:func:`polaroc.core.structural.structural_covariance` on the two models' components,
samples paired by (dataset, repeat, fold, sample), clusters optional (Obuchowski 1997).
A log is read this way when it has more than two class values and no ``positive_class``
(:func:`reads_m`); a two-class log keeps the one-vs-rest binary reading.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from polaroc.core.blocks import USABLE, block_tables, directions, m_table
from polaroc.core.guard import listing
from polaroc.core.log import Log
from polaroc.core.names import CLASS, LABEL, ONE_GROUP, SCORE
from polaroc.core.structural import m_coefficients, m_components

__all__ = ["MModels", "m_models", "reads_m"]

CLUSTER = "_pr_cluster"


def reads_m(parsed: Log) -> bool:
    """Whether a test compares M: more than two class values and no ``positive_class``.

    The class values are counted when the plan is built (one column of the log read).
    """
    if not parsed.has_class or parsed.positive_class is not None:
        return False
    classes = parsed.frame.select(pl.col(parsed.class_).drop_nulls().n_unique()).collect()
    return bool(classes.item() > 2)


@dataclass(frozen=True)
class MModels:
    """The models' components for M: one row per (model, sample), and their M.

    ``h``: the pairing keys, ``model``, ``_pr_label``, ``_pr_h`` and, with a cluster,
    ``_pr_cluster``; ``m``: group…, ``model``, ``auc`` (M); ``problems``: ``listing``
    frames of what keeps the models' samples from pairing; ``groups``: the groups to
    join on (``_pr_group`` for one group).
    """

    h: pl.LazyFrame
    m: pl.LazyFrame
    problems: list[pl.LazyFrame]
    groups: list[str]


def m_models(
    parsed: Log,
    group: list[str],
    keys: list[str],
    models: Sequence[Any] | None,
    cluster: str | None,
    *,
    paired: bool = True,
) -> MModels:
    """Each model's structural components for M per sample (see :class:`MModels`).

    ``paired``: every model needs the same class rows of each sample, with the same
    label (unpaired, each model's samples are its own: no such problems). The cluster
    column, if any, was checked by the log reading (set, one value per sample).
    """
    model = parsed.columns.model
    groups = group or [ONE_GROUP]
    sample = [k for k in keys if k not in group]
    frame = parsed.with_classes(parsed.unique())
    if models is not None:
        dtype = parsed.schema[model]
        frame = frame.filter(pl.col(model).is_in(pl.lit(list(models), pl.List(dtype))))
    frame = frame.cache()
    by = [*groups, model]
    _, sums = block_tables(frame, by)
    sums = sums.cache()
    dirs = directions(sums, by).cache()
    m = m_table(sums, dirs, by).select(*by, "auc")
    rows = frame.filter(USABLE).select(*by, *sample, CLASS, LABEL, SCORE)
    h = m_components(rows, m_coefficients(dirs, by), by, sample)
    found = _problems(frame, groups, sample, model) if paired else []
    if cluster is not None:
        ids = frame.group_by([*by, *sample]).agg(pl.col(cluster).first().alias(CLUSTER))
        h = h.join(ids, on=[*by, *sample], how="left", nulls_equal=True)
    return MModels(h, m, found, groups)


def _problems(
    frame: pl.LazyFrame, groups: list[str], sample: list[str], model: str
) -> list[pl.LazyFrame]:
    """Class rows in some models only, labels that differ between the models."""
    keys = [*groups, *sample]
    shown = [k for k in keys if k != ONE_GROUP]
    k_models = pl.col(model).n_unique()
    per_group = frame.group_by(groups).agg(k_models.alias("_pr_k"))
    per_row = frame.group_by([*keys, CLASS]).agg(k_models.alias("_pr_models"))
    missing = per_row.join(per_group, on=groups, nulls_equal=True).filter(
        pl.col("_pr_models") < pl.col("_pr_k")
    )
    what = "class rows missing from some model:"
    parts = [listing(missing.select(*shown, CLASS), [*shown, CLASS], what)]
    per_sample = frame.group_by(keys).agg(pl.col(LABEL).n_unique().alias("_pr_labels"))
    differ = per_sample.filter(pl.col("_pr_labels") > 1).select(shown)
    parts.append(listing(differ, shown, "samples whose label differs between the models:"))
    return parts
