"""The per-fold table: one lazy plan from a score log to n, M, sAUC, error and standard errors.

(The module is not called ``evaluate``: a submodule named like the function
``polaroc.evaluate`` would replace it as an attribute of the package whenever the
module is imported by path, e.g. by pytest's doctest collection.)

``evaluate`` is the first step of every comparison: one row per (model, fold) — or
any grouping — that the paired tests, the ANOVA and Duncan's test read. It never
collects; chained with those tables and collected once (``pl.collect_all``), the
log is read once.

Every log goes through one plan. The scores of each (group, class) block are
ordered once (:func:`polaroc.core.blocks.block_tables`); M, the (multiclass) sAUC,
the one-vs-rest placement values behind DeLong's standard error and the null
counts all come from that one pass. For a binary log without a class column the
group is the block, so the AUC, sAUC and both standard errors share one ordering,
and the error is a count at the threshold in the same aggregation. A log with a
class column adds one aggregation per sample for the error (C₁, the argmax rule),
reading the log through a cache so that it is scanned once.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Unpack

import polars as pl

from polaroc.core.args import validated
from polaroc.core.batches import AUTO, MaxRows, bounded_plan, check_max_rows
from polaroc.core.blocks import (
    CLASS,
    FLAG_COUNTS,
    USABLE,
    WEIGHTED_FLAG_COUNTS,
    average_precision_table,
    block_tables,
    c1_table,
    directions,
    duplicate_rows,
    labels_checked,
    m_table,
    per_class,
    read_classes,
    row_flags,
    threshold_c1,
    unique_keys,
    within_keys,
)
from polaroc.core.counts import heavily_tied
from polaroc.core.formulas import hanley_mcneil_se
from polaroc.core.inputs import NAN, ColumnLike, FrameLike, LogColumns, as_lazy, as_names
from polaroc.core.log import LogNames, columns_of, default_by, usable_weight
from polaroc.core.names import LABEL, SCORE, WEIGHT
from polaroc.core.structural import (
    COMPONENT,
    m_coefficients,
    m_components,
    structural_covariance,
)
from polaroc.metrics.scoring import brier_loss, log_loss_terms, not_probability

__all__ = ["evaluate"]

METRICS = ("auc", "sauc", "error", "average_precision", "auc_se_delong", "auc_se_hanley_mcneil")
COLUMNS = ("n", "n_classes", *METRICS, "auc_ci_low", "auc_ci_high", "n_null_score", "n_null_label")
_Z95 = 1.959963984540054  # Φ⁻¹(0.975): auc_ci_low/high are pROC ci.auc (DeLong), clipped to [0, 1]


# --------------------------------------------------------------------- pieces


def with_auc_ci(table: pl.LazyFrame, z: float = _Z95) -> pl.LazyFrame:
    """``auc_ci_low``/``auc_ci_high``: auc ∓ z·auc_se_delong clipped to [0, 1] (pROC ci.auc).

    ``z`` defaults to Φ⁻¹(0.975), the 95 % interval ``evaluate`` reports.
    """
    half = z * pl.col("auc_se_delong")
    return table.with_columns(
        auc_ci_low=(pl.col("auc") - half).clip(0.0, 1.0),
        auc_ci_high=(pl.col("auc") + half).clip(0.0, 1.0),
    )


def per_fold_table(
    counts: pl.LazyFrame,
    sums: pl.LazyFrame,
    dirs: pl.LazyFrame,
    scores: pl.LazyFrame,
    by: list[str],
    *,
    weighted: bool = False,
    delong: pl.LazyFrame | None = None,
) -> pl.LazyFrame:
    """The per-fold table's columns from its parts, per group of ``by``.

    ``counts``: ``n``, ``c1`` and the null counts (:func:`polaroc.core.blocks.threshold_c1`,
    or :func:`polaroc.core.blocks.c1_table`); ``sums`` and ``dirs``: the blocks' sums and
    directions; ``scores``: :func:`probability_parts` of the blocks' scoring-rule sums;
    ``delong``: by…, ``auc_se_delong`` of M from the samples' structural components
    (:func:`_m_se`) of the groups with several class blocks; in every other group, and
    without it (no ``sample`` column to join a sample's class rows, or the big groups),
    DeLong's SE of a group's only class block (:func:`_two_class_se`).
    One assembly for :func:`evaluate` and the big groups of
    :func:`polaroc.distributed.evaluate`, which make the same parts another way.
    """
    hanley_mcneil = hanley_mcneil_se(pl.col("auc"), pl.col("_n_pos"), pl.col("_n_neg"))
    two = pl.col("n_classes") == 2
    unweighted = pl.lit(not weighted)  # no standard error is defined for weighted AUCs
    se = (pl.col("n_classes") >= 2 if delong is not None else two) & unweighted

    def joined(table: pl.LazyFrame, part: pl.LazyFrame) -> pl.LazyFrame:
        return table.join(part, on=by, how="left", nulls_equal=True)

    table = counts
    parts = [m_table(sums, dirs, by), _two_class_se(sums, dirs, by, weighted=weighted)]
    if delong is not None:  # M's SE where a group has several blocks, else the one block's
        one = pl.col("auc_se_delong")
        parts[1] = (
            parts[1]
            .join(delong.rename({"auc_se_delong": "_pr_se_m"}), on=by, how="left", nulls_equal=True)
            .with_columns(pl.coalesce("_pr_se_m", one).alias("auc_se_delong"))
            .drop("_pr_se_m")
        )
    for part in (*parts, average_precision_table(sums, by), scores):
        table = joined(table, part)
    return table.with_columns(
        pl.col("n", "n_classes").fill_null(0),
        (1.0 - pl.col("c1")).alias("error"),
        pl.when(two).then(pl.col("average_precision")).alias("average_precision"),
        pl.when(se).then(pl.col("auc_se_delong")).alias("auc_se_delong"),
        pl.when(two & unweighted).then(hanley_mcneil).alias("auc_se_hanley_mcneil"),
        *_probability_columns(),
    )


# a whole log is collapsed when at most 10 % of its first 100,000 scores are distinct and
# it has 32 rows per such value (a hash aggregation over every row costs about a sort)
_LOG_SAMPLE, _LOG_SHARE, _LOG_RUN = 100_000, 0.1, 32


def _heavily_tied(log: FrameLike, score: str) -> bool:
    """Whether an in-memory log's scores look heavily tied (a cheap sample, no plan run)."""
    if not isinstance(log, pl.DataFrame) or log.height < 1000:
        return False
    return bool(
        log.select(
            heavily_tied(pl.col(score), sample=_LOG_SAMPLE, share=_LOG_SHARE, per_value=_LOG_RUN)
        ).item()
    )


def _two_class_se(
    sums: pl.LazyFrame, dirs: pl.LazyFrame, by: list[str], *, weighted: bool
) -> pl.LazyFrame:
    """What the standard errors of a two-class group need, per group.

    ``auc_se_delong``: the one direction A(i|j) of a two-class group holding one class
    block is the one-vs-rest AUC of class i, with DeLong's standard error (from the
    block's sums); null for a group of several blocks, whose samples' class rows only
    a ``sample`` column joins (:func:`_m_se`).

    ``n_pos``/``n_neg``: samples of the larger and the smaller label value, the
    positive and negative class of Hanley & McNeil's formula (1/``True`` against
    0/``False`` in a binary log).
    """
    delong = (
        per_class(dirs, by, weighted=weighted)
        .group_by(by)
        .agg(
            pl.when(pl.len() == 1).then(pl.col("var_delong").sqrt().first()).alias("auc_se_delong")
        )
    )
    n = pl.col("n").sort_by(LABEL)
    counts = (
        sums.group_by([*by, LABEL])
        .agg(pl.col("n").max())
        .group_by(by)
        .agg(n.last().alias("_n_pos"), n.first().alias("_n_neg"))
    )
    return counts.join(delong, on=by, how="left", nulls_equal=True)


def _m_se(
    frame: pl.LazyFrame, dirs: pl.LazyFrame, by: list[str], sample: list[str]
) -> pl.LazyFrame:
    """Per group: ``auc_se_delong``, √Var(M) from the samples' structural components.

    ``frame``: the log's rows as :func:`polaroc.core.blocks.read_classes` gives them;
    ``sample``: the columns naming a sample within a group. Each sample's component
    for M (:func:`polaroc.core.structural.m_components`) and their variance per label
    (:func:`polaroc.core.structural.structural_covariance`, every sample its own
    cluster): DeLong, DeLong & Clarke-Pearson (1988) generalised to Hand & Till's M.
    """
    # a group whose directions all read one class block has DeLong's SE from that block's
    # sums already (:func:`_two_class_se`): only the others need the samples' components
    blocks = pl.col(CLASS).n_unique()
    several = dirs.group_by(by).agg(blocks.alias("_pr_blocks")).filter(pl.col("_pr_blocks") > 1)
    rows = frame.filter(USABLE).select(*by, *sample, CLASS, LABEL, SCORE)
    rows = rows.join(several.select(by), on=by, how="semi", nulls_equal=True) if by else rows
    h = m_components(rows, m_coefficients(dirs, by), by, sample)
    component, label = pl.col(COMPONENT), pl.col(LABEL)
    variance = structural_covariance(component, component, label)
    return h.group_by(by).agg(variance.sqrt().alias("auc_se_delong"))


@dataclass(frozen=True)
class EvaluateOptions:
    """Every option of :func:`evaluate` but the log and ``max_rows``, built once.

    The batched (``max_rows=``, :func:`polaroc.evaluate_in_batches`) and distributed
    (:func:`polaroc.distributed.evaluate`) paths hand this one frozen, picklable object
    down instead of forwarding each keyword by hand, so that all four entry points take
    the same options and give the same table.
    """

    columns: LogColumns = field(default_factory=LogColumns)
    threshold: float = 0.5
    weight: ColumnLike | None = None
    collapse_ties: bool | None = None
    by: tuple[str, ...] | None = None

    @classmethod
    def of(
        cls,
        *,
        by: str | Iterable[str] | None = None,
        threshold: float = 0.5,
        weight: ColumnLike | None = None,
        collapse_ties: bool | None = None,
        **names: Unpack[LogNames],
    ) -> EvaluateOptions:
        """The options from :func:`evaluate`'s keyword arguments (``names``: the columns)."""
        keys = None if by is None else tuple(as_names(by))
        return cls(columns_of(names), threshold, weight, collapse_ties, keys)

    def grouped(self, by: Iterable[str]) -> EvaluateOptions:
        """The same options grouped by ``by``."""
        return replace(self, by=tuple(by))

    def keywords(self) -> dict[str, Any]:
        """:func:`evaluate`'s keyword arguments (``max_rows`` left out)."""
        c = self.columns
        return {
            "by": self.by, "threshold": self.threshold, "model": c.model, "fold": c.fold,
            "class_": c.class_, "score": c.score, "label": c.label, "sample": c.sample,
            "dataset": c.dataset, "repeat": c.repeat, "collapse_ties": self.collapse_ties,
            "weight": self.weight,
        }  # fmt: skip


def _bounded(log: FrameLike, max_rows: MaxRows, options: EvaluateOptions) -> pl.LazyFrame | None:
    """``evaluate(log)`` through :func:`polaroc.core.batches.bounded_plan` (whole groups at a time).

    ``None`` when there is nothing to bound: ``max_rows=None``, or ``"auto"`` over an
    in-memory frame (the plain plan then costs nothing more).
    """
    if max_rows is None or (max_rows == AUTO and not isinstance(log, pl.LazyFrame)):
        return None
    keywords = options.keywords()

    def plan(frame: pl.DataFrame | pl.LazyFrame) -> tuple[pl.LazyFrame, list[str]]:
        schema = frame.collect_schema()
        keys = default_by(schema, options.columns) if options.by is None else list(options.by)
        return evaluate(frame, **keywords, max_rows=None), keys

    return bounded_plan(as_lazy(log), plan, max_rows)


# ------------------------------------------------------------------ public API


@validated
def evaluate(
    log: FrameLike,
    *,
    by: str | Iterable[str] | None = None,
    threshold: float = 0.5,
    collapse_ties: bool | None = None,
    weight: ColumnLike | None = None,
    max_rows: int | Literal["auto"] | None = "auto",
    **columns: Unpack[LogNames],
) -> pl.LazyFrame:
    """The per-fold table: n, M (the AUC), sAUC, error and the AUC's standard errors.

    Columns, one row per group:

    ``n``
        Samples with a usable row (non-null score and label): distinct ``sample``
        ids when the log has a class and a sample column, otherwise rows (the
        largest class's rows for a log with a class column).
    ``n_classes``
        Label values with samples in the group (the classes M averages over).
    ``auc``
        Hand & Till's (2001) M, eq. 7 (see :func:`polaroc.multiclass_auc`); for a
        binary log it is the plain AUC of :func:`polaroc.auc` (a log holding both
        classes' rows averages the two directions).
    ``sauc``
        Wu & Flach's (2005) scored AUC; for several classes its pairwise average.
    ``error``
        ``1 − C₁``: the share of samples whose highest-scoring class is not their
        label (Hand & Till 2001, §4), ties at the top counting 1/k. A sample with a
        single score row — every sample of a log without a class column — is
        predicted positive iff ``score >= threshold`` (Bradley 1997, eq. 1).
        Rows are tied to samples by ``sample``; a log with a class column and no
        sample column has an error only in groups holding one class value.
    ``average_precision``
        Average precision of the positive class (1 or ``True``; the larger class
        value of a two-class log), as :func:`polaroc.average_precision`, read from
        the same ordering as the AUC. Null for groups of more than two classes
        (no single positive class; use :func:`polaroc.average_precision` per class
        for a one-vs-rest view) and for one-class groups.
    ``auc_se_delong``, ``auc_se_hanley_mcneil``
        Standard errors of the AUC: DeLong, DeLong & Clarke-Pearson (1988) and
        Hanley & McNeil's ``SE(W)`` (Bradley 1997, eq. 10–12), as
        :func:`polaroc.auc_se`. DeLong's is defined for every number of classes: M
        (Hand & Till 2001, eq. 7) is a linear combination of the U-statistics
        A(i|j), so each sample's structural component for M (its placement values
        in every direction, weighted by the direction's coefficient in M) gives
        Var(M) = Σₖ s²ₖ/nₖ, s²ₖ their sample variance over the label-k samples
        (:mod:`polaroc.core.structural`; for one direction it is DeLong's exactly,
        and for a two-class log holding both classes' rows it is M's exact SE). It
        needs the ``sample`` column to join a sample's class rows: without one it is
        null for groups of more than one class block. Null too with fewer than two
        samples of a label. Hanley & McNeil's is for two classes only (null for
        more), the larger class value (1, ``True``) taken as the positive class.
    ``auc_ci_low``, ``auc_ci_high``
        The 95% DeLong interval ``auc ∓ 1.96·auc_se_delong`` clipped to [0, 1], as
        pROC's ``ci.auc`` (see :func:`polaroc.auc_ci`); null where the SE is.
    ``n_null_score``, ``n_null_label``
        Rows dropped because the score, or the label (or class), is null.
    ``n_null_weight``
        Only with ``weight``: rows dropped because their weight is null.

    A degenerate group (one class only) has null ``auc``/``sauc``; a NaN score
    makes the group's metrics NaN. Nothing is collected: the result is a lazy plan
    that can be chained with the comparison tables and collected once
    (``pl.collect_all``); tables built on it share its read of the log. To share
    the read with other tables that read the log itself (e.g.
    :func:`polaroc.pairwise_auc`), pass them all ``pl.scan_parquet(...).cache()``.

    Parameters
    ----------
    log
        ``DataFrame`` or ``LazyFrame`` (e.g. ``pl.scan_parquet`` over many files) in
        the long format of the design contract. A log without a class column is
        binary and its label the positive indicator (Boolean or 0/1).
    by
        Grouping columns; default ``(dataset, model, repeat, fold)`` of the columns
        the log has (``model`` and ``fold`` always); ``by=()`` is one group.
    threshold
        Decision threshold (a number) for the error of single-row samples.
    collapse_ties
        Count the rows of each distinct (group, class, score, label) first and order
        the counts instead of the rows: much faster when scores are heavily tied
        (rounded or discrete scores, e.g. a tree's leaf frequencies), slower when
        they are distinct; the results are the same. ``None`` (default) decides from
        the first 100,000 scores of a ``DataFrame`` (collapse when at most 10 % are
        distinct, with at least 32 rows per distinct value) and never collapses a
        ``LazyFrame`` (whose data is not read here).
    weight
        Case weights, a column name or an expression (finite, ``>= 0``); default none.
        The log's ``weight`` column is used only when named here. ``auc``, ``sauc`` and
        ``average_precision`` then weight each (positive, negative) pair — or, for M,
        each (label-i, label-j) pair — by w·w' (see :func:`polaroc.auc` and
        :func:`polaroc.pairwise_auc`), and ``error`` is the weighted share of
        samples misclassified. A weight belongs to the sample: it must be the same on
        all the sample's class rows, else a ``ValueError`` names the column (one rule
        for the AUC, which weights rows, and the error, which weights samples).
        ``n`` still counts samples (samples of weight 0 and null weights are left out).
        ``auc_se_delong`` and ``auc_se_hanley_mcneil`` are null: neither paper
        defines a variance for case-weighted AUCs, and importance weights change
        the effective sample size in ways the formulas do not know (use
        :func:`polaroc.bootstrap` instead). A negative, NaN or infinite weight
        raises ``ValueError``.

    max_rows
        Bound the memory of the query: when the result is collected, evaluate whole
        groups about ``max_rows`` rows at a time (as :func:`polaroc.evaluate_in_batches`)
        instead of holding every group until the end of the log (a query that orders
        every group holds about 5–8 times the log's in-memory size). The plan stays lazy
        and chains as before; collecting it reads the key columns once more to plan the
        batches, then each batch with a filter pushed into the scan.

        ``"auto"`` (default): bounded when ``log`` is a ``LazyFrame`` whose plan scans
        files (``pl.scan_parquet``, :func:`polaroc.scan_logs`, CSV, IPC, NDJSON) and has
        no ``.cache()`` (a cached log is held whole for the tables that share it); the
        plain plan, at no extra cost, for a ``DataFrame`` or an in-memory ``LazyFrame``.
        When collected, the batch size is chosen from what the plan knows: the log's
        rows ``N`` (counted with the groups from the key columns: Parquet metadata for
        a plain scan), its in-memory bytes per row ``s`` (from its first 10,000 rows)
        and the memory available ``A`` (``/proc/meminfo``), and the threads ``T``
        Polars runs (``pl.thread_pool_size()``): a batch of
        ``b = min(1.5·N·s − F, A/2) / (PEAK(T)·s)`` rows, at least 100,000, so that
        the batch's peak plus the fixed cost ``F`` of running a query (80 MB) stays
        within 1.5× the log's size and half the free memory. The peak per byte of the
        batch grows with the groups Polars orders at once, one per thread: measured
        6.45 on 2 threads and 11.8 on 16, the rule takes
        ``PEAK(T) = 8 + 0.5·(T − 2)`` (8 up to two threads; the measured cost times
        1.24 at every T, :func:`polaroc.core.batches.auto_rows`), so the batch
        shrinks as the pool grows and the peak does not grow with the cores. A log
        of ``b`` rows or fewer runs as one query, unfiltered. ``None``: always one
        query over the whole log. A number (NumPy integers too): that many rows a batch.
    **columns
        Names of the log's columns, as keywords: ``model``, ``fold``, ``class_``,
        ``score``, ``label``, ``sample``, ``dataset``, ``repeat`` (each defaults to its
        own name; ``class``, ``sample``, ``dataset`` and ``repeat`` are optional under
        their default names, and a name given here must exist).

    Returns
    -------
    pl.LazyFrame
        by…, ``n``, ``n_classes``, ``auc``, ``sauc``, ``error``,
        ``average_precision``, ``auc_se_delong``, ``auc_se_hanley_mcneil``,
        ``n_null_score``, ``n_null_label``, ``brier``, ``log_loss``,
        ``n_not_probability`` (and ``n_null_weight`` with ``weight``).

        ``brier`` and ``log_loss`` (lower is better) are those of :func:`polaroc.calibration`:
        for two classes on the positive class's scores (the larger class value's rows),
        for more classes summed over classes and of the true class's score. They are
        defined only when the scores are probabilities: a group holding a score outside
        ``[0, 1]`` gets null for both and counts those rows in ``n_not_probability``
        (0 otherwise).

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> log = pl.DataFrame({
    ...     "model": ["a"] * 6 + ["b"] * 6,
    ...     "fold": 0,
    ...     "score": [0.9, 0.8, 0.6, 0.4, 0.3, None, 0.9, 0.4, 0.4, 0.6, 0.2, 0.1],
    ...     "label": [True, True, False, True, False, False] * 2,
    ... })
    >>> table = pr.evaluate(log).sort("model")
    >>> columns = ["model", "n", "auc", "sauc", "error", "auc_se_delong", "n_null_score"]
    >>> table.select(columns).collect()
    shape: (2, 7)
    ┌───────┬─────┬──────────┬──────────┬──────────┬───────────────┬──────────────┐
    │ model ┆ n   ┆ auc      ┆ sauc     ┆ error    ┆ auc_se_delong ┆ n_null_score │
    │ ---   ┆ --- ┆ ---      ┆ ---      ┆ ---      ┆ ---           ┆ ---          │
    │ str   ┆ i64 ┆ f64      ┆ f64      ┆ f64      ┆ f64           ┆ i64          │
    ╞═══════╪═════╪══════════╪══════════╪══════════╪═══════════════╪══════════════╡
    │ a     ┆ 5   ┆ 0.833333 ┆ 0.283333 ┆ 0.4      ┆ 0.235702      ┆ 1            │
    │ b     ┆ 6   ┆ 0.944444 ┆ 0.4      ┆ 0.166667 ┆ 0.078567      ┆ 0            │
    └───────┴─────┴──────────┴──────────┴──────────┴───────────────┴──────────────┘

    Chained with a comparison table and collected once:

    >>> per_fold = pr.evaluate(log)
    >>> tables = pl.collect_all([per_fold, per_fold.group_by("model").agg(pl.col("auc").mean())])
    >>> [t.height for t in tables]
    [2, 2]
    """
    options = EvaluateOptions.of(
        by=by, threshold=threshold, weight=weight, collapse_ties=collapse_ties, **columns
    )
    batched = _bounded(log, check_max_rows(max_rows), options)
    if batched is not None:
        return batched
    names = options.columns
    score, sample = names.score, names.sample
    # labels are checked from the ordering's own sums (no second read of the log)
    parsed, frame = read_classes(log, by=by, columns=names, weight=weight, check_labels=False)
    weighted = weight is not None
    by_ = parsed.groups
    collapse = _heavily_tied(log, score) if collapse_ties is None else collapse_ties
    # a collapsed log has no per-row aggregation to count repeated keys in: the
    # per-sample pass counts them (and gives the same n and error for one-row samples)
    per_sample = parsed.has(sample) and (parsed.has_class or collapse)
    frame = frame.cache()  # read once: the ordering, the per-sample pass, the scoring rules
    flagged = frame.with_columns(row_flags(names, parsed.has_class, threshold, weighted=weighted))
    # repeated keys are flagged in the ordering's own per-block aggregation, or when
    # collapsing (whose extras must be sums) in the per-sample aggregation
    within = within_keys(parsed, by_)
    keyed = parsed.has(sample) and not collapse
    flags = WEIGHTED_FLAG_COUNTS if weighted else FLAG_COUNTS
    extra = [*flags, *duplicate_rows(within, sample)] if keyed else flags
    keys, sums = block_tables(flagged, by_, extra, collapse=collapse, weighted=weighted)
    sums = sums.cache()
    dirs = directions(sums, by_, weighted=weighted).cache()
    counts = threshold_c1(keys, by_, keyed=keyed, weighted=weighted)
    if per_sample:
        c1 = c1_table(
            frame.filter(USABLE), by_, sample, threshold, within, weighted=weighted,
            weight_name=parsed.weight or "weight", check=not keyed,
        )  # fmt: skip
        counts = counts.drop("n", "c1").join(c1, on=by_, how="left", nulls_equal=True)
    rules = _probability_scores(flagged, by_, weighted=weighted, has_class=parsed.has_class)
    m_se = None
    if parsed.has_class and parsed.has(sample) and not weighted:
        m_se = _m_se(frame, dirs, by_, [*within, sample])
    table = per_fold_table(counts, sums, dirs, rules, by_, weighted=weighted, delong=m_se)
    if per_sample or keyed:
        table = unique_keys(table, frame, by_, within, sample)
    if parsed.has_class:
        table = labels_checked(table, sums, by_)
    scores = ("brier", "log_loss", pl.col("n_not_probability").fill_null(0))
    return with_auc_ci(table).select(
        *parsed.by, *COLUMNS, *scores, *(["n_null_weight"] if weighted else [])
    )


# ------------------------------------------------- Brier score and log loss
#
# The rules of ``metrics.scoring.group_scores`` (which ``pr.calibration`` runs), read from
# sums: per-row terms as plain columns, summed per (group, class) block, then combined per
# group. ``group_scores``' aggregation of the rules' expressions over the rows cost about as
# much as the ordering (Polars aggregates plain columns much faster than expressions); in
# the ordering's own per-block aggregation the sums measured ~3 % of evaluate slower than
# in an aggregation of their own.
_P = "_pr_p_"  # prefix of the per-row terms and their sums


def score_sum(name: str) -> str:
    """The column of a scoring-rule term (``brier``, ``log``, ``w``, ``bad``, ...) and its sum."""
    return f"{_P}{name}"


def _probability_flags(weighted: bool, has_class: bool) -> list[list[pl.Expr]]:
    """Per row: the terms of the Brier score and log loss, 0 outside the usable rows.

    Two ``with_columns`` steps (the second reads the first's log loss rather than
    taking the logarithm again); the terms over the positive rows only serve groups
    of three or more classes, so a log without a class column does without them.
    """
    usable = (USABLE & usable_weight()) if weighted else USABLE
    s, pos = pl.col(SCORE), pl.col(LABEL) == pl.col(CLASS)

    def times_w(value: pl.Expr) -> pl.Expr:
        return value * pl.col(WEIGHT) if weighted else value

    def where(rows: pl.Expr, value: pl.Expr) -> pl.Expr:
        return pl.when(rows).then(value).otherwise(0.0)

    log = pl.col(score_sum("log"))
    first = [
        where(usable, times_w(brier_loss(s, pos))).alias(score_sum("brier")),
        where(usable, times_w(log_loss_terms(s, pos))).alias(score_sum("log")),
        (where(usable, pl.col(WEIGHT)) if weighted else usable).alias(score_sum("w")),
        (usable & not_probability(s)).alias(score_sum("bad")),
    ]
    if not has_class:
        return [first]
    w_pos = where(usable & pos, pl.col(WEIGHT)) if weighted else usable & pos
    return [first, [where(pos, log).alias(score_sum("log_pos")), w_pos.alias(score_sum("w_pos"))]]


def _probability_scores(
    flagged: pl.LazyFrame, by: list[str], *, weighted: bool, has_class: bool
) -> pl.LazyFrame:
    """Per group: what :func:`_probability_columns` reads (``flagged``: with ``row_flags``).

    Two classes or fewer: means over the rows of the largest class value present (its
    block); more: the Brier terms of every row and the true class's log loss, each over
    the samples (the positive rows).
    """
    for step in _probability_flags(weighted, has_class):
        flagged = flagged.with_columns(step)
    blocks = flagged.group_by([*by, CLASS]).agg(
        pl.col("_rows").sum(), pl.col("_nan").any(), pl.col(f"^{score_sum('')}.*$").sum()
    )
    return probability_parts(blocks, by, has_class)


def probability_parts(keys: pl.LazyFrame, by: list[str], has_class: bool) -> pl.LazyFrame:
    """Per group, from the per-(group, class) block sums of :func:`_probability_scores`.

    ``keys``: by…, ``_pr_class``, ``_rows`` (usable rows), ``_nan`` (any NaN score) and
    the ``_pr_p_*`` sums of :func:`_probability_flags` (``log_pos``/``w_pos`` only
    with ``has_class``). Read by :func:`per_fold_table` through ``_probability_columns``.
    """
    present = pl.col("_rows") > 0
    cls = pl.col(CLASS)
    top = cls == cls.filter(present).max()

    def total(name: str, rows: pl.Expr | None = None) -> pl.Expr:
        value = pl.col(score_sum(name))
        return (value if rows is None else value.filter(rows)).sum()

    several = [  # read only for three classes or more
        (total("brier") / total("w_pos")).alias("_brier_k"),
        (total("log_pos") / total("w_pos")).alias("_log_k"),
    ]
    none = pl.lit(None, pl.Float64)
    return keys.group_by(by).agg(
        (total("brier", top) / total("w", top)).alias("_brier_2"),
        (total("log", top) / total("w", top)).alias("_log_2"),
        *(several if has_class else [none.alias("_brier_k"), none.alias("_log_k")]),
        cls.filter(present).n_unique().alias("_classes"),
        total("bad").cast(pl.Int64).alias("n_not_probability"),
        pl.col("_nan").filter(present).any().alias("_nan_p"),
    )


def _probability_columns() -> list[pl.Expr]:
    """``brier``, ``log_loss``: null for one label or a score outside [0, 1], NaN for NaN."""
    labels = pl.col("n_classes")
    many = pl.max_horizontal("_classes", labels) > 2
    defined = (labels > 1) & (pl.col("n_not_probability") == 0)

    def rule(name: str) -> pl.Expr:
        value = pl.when(many).then(pl.col(f"_{name}_k")).otherwise(pl.col(f"_{name}_2"))
        return pl.when(defined).then(pl.when(pl.col("_nan_p")).then(NAN).otherwise(value))

    return [rule("brier").alias("brier"), rule("log").alias("log_loss")]
