"""Model selection by validation AUC or validation sAUC: Wu & Flach's protocol.

Wu & Flach (2005, §4) split each data set into folds that give every round a
training part, a validation part and a test part; they train several models, pick
the one with the highest AUC — or, separately, the highest scored AUC (sAUC) — on
the validation part, and compare the test AUCs of the two choices with a paired
t test over the rounds.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal, Unpack

import polars as pl

from polaroc.compare._reading import binary_rows, class_read, read_paired, with_class_read
from polaroc.compare.fold_table import design_listings
from polaroc.core.args import validated
from polaroc.core.guard import guarded, listing, problems
from polaroc.core.inputs import FrameLike
from polaroc.core.log import POSITIVE, SCORE, LogNames, columns_of
from polaroc.metrics.binary import auc
from polaroc.metrics.scored import sauc

__all__ = ["select_models"]

RULES = {"auc": auc, "sauc": sauc}


def _choice(rule: str, model: str, ties: str) -> dict[str, pl.Expr]:
    """The models with the highest validation value of ``rule`` and what they score on test.

    Every model reaching the best value is tied; ``ties="mean"`` reports the mean of
    their test AUCs (the expected result of breaking the tie at random),
    ``ties="first"`` the test AUC of the smallest model id. ``model`` is the smallest
    tied id either way.
    """
    value = pl.col(rule)
    best = value.is_not_null() & (value == value.max())
    tied = pl.col(model).filter(best)
    test = pl.col("test_auc").filter(best)
    chosen = test.mean() if ties == "mean" else test.sort_by(tied).first()
    has_nan = value.is_nan().any()  # an unknown value: no choice can be trusted
    nan = pl.lit(float("nan"))
    return {
        "rule": pl.lit(rule),
        model: pl.when(~has_nan).then(tied.sort().first()),
        "n_tied": pl.when(~has_nan).then(best.sum().cast(pl.Int64)),
        "validation_value": pl.when(has_nan).then(nan).otherwise(value.max()),
        "test_auc": pl.when(has_nan).then(nan).otherwise(chosen),
    }


@validated
def select_models(
    log: FrameLike,
    *,
    by: str | Iterable[str] | None = None,
    split: str = "split",
    validation: Any = "validation",
    test: Any = "test",
    positive_class: Any = None,
    ties: Literal["mean", "first"] = "mean",
    **columns: Unpack[LogNames],
) -> pl.LazyFrame:
    """Per fold, the model chosen by validation AUC and by validation sAUC, and their test AUC.

    For every (by…, fold) the AUC and Wu & Flach's scored AUC of each model are
    computed on the rows whose ``split`` is ``validation``; the model with the highest
    value is chosen (separately for each rule) and its AUC on the ``test`` rows of
    the same fold is reported (Wu & Flach 2005, §4, Tables 4–5). The two rules are
    then compared by a paired t test on ``test_auc``, with the rule as the "model":
    ``pr.paired_ttest(chosen, "test_auc", model="rule")`` (``estimate`` is AUC-rule
    minus sAUC-rule).

    Parameters
    ----------
    log
        Score log with ``model``, ``fold``, ``split``, ``score`` and ``label``
        columns (and ``class``, see ``positive_class``; ``dataset``, ``repeat`` and
        ``sample`` where it has them). A round is a (``repeat``, ``fold``).
    by
        Keyword-only groups kept apart; ``None`` (default) means ``"dataset"`` when
        the log has that column, ``()`` none. A log with a ``repeat`` column is always
        read within each repeat (the column is added first to ``by``): every repeat
        is its own round of each fold.
    split, validation, test
        The column naming each row's part, and its values for the two parts (other
        values, e.g. training rows, are ignored).
    positive_class
        For a log with a ``class`` column: the class whose score rows are used.
        ``None`` (default): a two-class log is read through its larger class value
        (of each data set), stated in the output; a log of more than two classes
        needs it.
    ties
        Several models often share the best validation AUC on small validation parts
        (Wu & Flach's setting), and breaking such ties by name would favour one model.
        ``"mean"`` (default) reports the mean test AUC of the tied models — the
        expected result of choosing among them at random; ``"first"`` takes the
        smallest model id.
    **columns
        Names of the log's columns, as keywords: ``model``, ``fold``, ``class_``,
        ``score``, ``label``, ``sample``, ``dataset``, ``repeat`` (each defaults to its
        own name).

    Returns
    -------
    pl.LazyFrame
        Two rows per (by…, fold), sorted: by…, ``fold``, ``rule`` ("auc" or "sauc"),
        ``model`` (the chosen one; the smallest id among tied models), ``n_tied``
        (models sharing the best validation value), ``validation_value`` (that best
        AUC or sAUC), ``test_auc`` (see ``ties``), and for a log with a class
        column the class read (named as that column).

        * Models whose validation value is null (no positives or negatives) are not
          candidates; if none is left, ``model`` and ``test_auc`` are null.
        * A NaN validation value in the fold gives a null ``model`` and NaN values.

    Raises
    ------
    ValueError
        Missing columns; and for a ``DataFrame`` input a model lacking a validation
        or test part in a fold, no rows with the ``validation`` or ``test`` value, a
        repeated (dataset, model, repeat, fold, sample, class) key, a label value with
        no score row for its class, or more than two classes without
        ``positive_class`` (for a ``LazyFrame``: at collection, as
        ``polars.exceptions.ComputeError``).
    TypeError
        Wrong dtypes (see the log contract).

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> log = pl.DataFrame({
    ...     "fold": [0] * 16 + [1] * 16,
    ...     "split": (["validation"] * 4 + ["test"] * 4) * 4,
    ...     "model": (["a"] * 8 + ["b"] * 8) * 2,
    ...     "score": [0.9, 0.6, 0.55, 0.1, 0.8, 0.7, 0.3, 0.2,
    ...               0.7, 0.6, 0.4, 0.3, 0.9, 0.2, 0.6, 0.1,
    ...               0.8, 0.3, 0.6, 0.2, 0.7, 0.6, 0.4, 0.5,
    ...               0.99, 0.01, 0.98, 0.985, 0.9, 0.8, 0.2, 0.1],
    ...     "label": [True, False, True, False] * 8,
    ... })
    >>> chosen = pr.select_models(log)
    >>> chosen.collect()
    shape: (4, 6)
    ┌──────┬──────┬───────┬────────┬──────────────────┬──────────┐
    │ fold ┆ rule ┆ model ┆ n_tied ┆ validation_value ┆ test_auc │
    │ ---  ┆ ---  ┆ ---   ┆ ---    ┆ ---              ┆ ---      │
    │ i64  ┆ str  ┆ str   ┆ i64    ┆ f64              ┆ f64      │
    ╞══════╪══════╪═══════╪════════╪══════════════════╪══════════╡
    │ 0    ┆ auc  ┆ a     ┆ 2      ┆ 0.75             ┆ 0.875    │
    │ 0    ┆ sauc ┆ a     ┆ 1      ┆ 0.3875           ┆ 0.75     │
    │ 1    ┆ auc  ┆ a     ┆ 1      ┆ 1.0              ┆ 0.5      │
    │ 1    ┆ sauc ┆ b     ┆ 1      ┆ 0.48875          ┆ 0.75     │
    └──────┴──────┴───────┴────────┴──────────────────┴──────────┘

    In fold 0, models ``a`` and ``b`` tie on validation AUC; the AUC rule's test
    AUC is the mean of theirs.
    """
    if ties not in ("mean", "first"):
        msg = f"ties must be 'mean' or 'first', got {ties!r}"
        raise ValueError(msg)
    names = columns_of(columns, caller="select_models")
    model, fold = names.model, names.fold
    parsed, group = read_paired(
        log, by=by, columns=names, need=[fold, model, split], positive_class=positive_class
    )
    frame = binary_rows(parsed, "select_models")
    frame = frame.filter(pl.col(split).is_in([validation, test])).cache()
    found = []
    for part in (validation, test):
        empty = frame.filter(pl.col(split) == part).select(pl.len()).filter(pl.col("len") == 0)
        found.append(listing(empty, ["len"], f"no rows with {split} == {part!r}:"))

    unit = [*group, fold]
    values = (
        frame.group_by([*unit, model, split])
        .agg(**{name: metric(SCORE, POSITIVE) for name, metric in RULES.items()})
        .cache()
    )  # read by the checks and twice below: one plan node, not copies
    found += design_listings(values, by=unit, model=model, fold=split, min_folds=2)
    head = "polaroc: select_models needs a validation and a test part of every fold: "
    tail = f". Every {model} needs rows of both parts ({split} values) in every {fold}."
    values = guarded(log, values, problems(found), head, tail).cache()

    on_test = values.filter(pl.col(split) == test).select(*unit, model, test_auc="auc")
    candidates = values.filter(pl.col(split) == validation).join(
        on_test, on=[*unit, model], how="left", nulls_equal=False
    )
    chosen = [candidates.group_by(unit).agg(**_choice(rule, model, ties)) for rule in RULES]
    out = pl.concat(chosen).sort([*unit, "rule"])
    return with_class_read(out, class_read(parsed, frame, group), group)
