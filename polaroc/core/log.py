"""Reading a score log: the one object every public function that reads a log builds.

A log has one row per (model, fold, sample, class): the score a model gave a test
sample for one class (see the design contract). :func:`read_log` is called once at the
top of every public function that reads a log and returns a :class:`Log`: the nine
column names, whether the log has a class column (and so which binary layout it can
be), its positive class and how that was chosen, its design (data sets, repeats,
folds, samples), the default grouping derived from that design, and the checks every
function applies the same way — the columns and dtypes at call time, before any data
is read; the unique keys; and the label values that have no score row for their class.

The frame it holds carries two internal columns every table computes from:

``_pr_score``
    the score as ``Float64``;
``_pr_positive``
    ``label == class`` (``Boolean``), or, for a log without a ``class`` column, the
    label itself as a positive indicator (Boolean, or 0/1 checked at run time).

Nothing is collected for a ``LazyFrame`` (its checks run when the plan does); a
``DataFrame``'s data checks run at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypedDict, Unpack

import polars as pl

from polaroc.core.guard import guarded, listing, problems
from polaroc.core.inputs import (
    ColumnLike,
    FrameLike,
    LogColumns,
    as_indicator,
    as_lazy,
    as_names,
    as_weight,
    bad_weight,
    checked_indicator,
    describe,
    fail_if,
    require_columns,
    require_named,
    require_numeric,
    to_expr,
    weight_message,
)

# re-exported (``X as X``) for modules that still read them here; new code: polaroc.core.names
from polaroc.core.names import CLASS, LABEL, ONE_GROUP, WEIGHT
from polaroc.core.names import POSITIVE as POSITIVE
from polaroc.core.names import SCORE as SCORE


class LogNames(TypedDict, total=False):
    """The log's column names, as keyword arguments (each defaults to its own name).

    Every public function that reads a log takes these as ``**columns``: ``model``,
    ``fold``, ``class_`` (the ``class`` column: ``class`` is a Python keyword),
    ``score``, ``label``, ``sample``, ``dataset`` and ``repeat``. The ninth column,
    ``weight``, is not named by default: a function that can weight takes ``weight=``
    (a column name or an expression), and no weight is read unless given.
    """

    model: str
    fold: str
    class_: str
    score: str
    label: str
    sample: str
    dataset: str
    repeat: str


COLUMN_KEYWORDS: tuple[str, ...] = tuple(LogNames.__annotations__)

Unit = Literal["fold", "model", "dataset", "log"]
"""What one group of a function's default ``by=`` is: a test partition (``"fold"``: data
set, model, repeat, fold), a model's pooled folds (``"model"``: data set, model), a data
set (``"dataset"``, for tests that pair models within it), or the whole log."""


def columns_of(names: Mapping[str, object], *, caller: str = "") -> LogColumns:
    """The :class:`LogColumns` of ``**columns`` keywords, or a ``TypeError`` naming a bad one.

    A keyword that is not a column of the log (a typo such as ``scores=``) and a name
    that is not a string are refused here, once for every function.
    """
    where = f"{caller}() " if caller else ""
    for key, value in names.items():
        if key not in COLUMN_KEYWORDS:
            msg = (
                f"{where}got an unexpected keyword argument {key!r}; the log's columns are "
                f"named by {', '.join(k + '=' for k in COLUMN_KEYWORDS)}"
            )
            raise TypeError(msg)
        if not isinstance(value, str):
            msg = f"{key} must be a column name (a string), got {type(value).__name__}: {value!r}"
            raise TypeError(msg)
    return LogColumns().with_names(**names)  # type: ignore[arg-type]


DEFAULT_BY = ("model", "fold")


@dataclass(frozen=True)
class Log:
    """A log read once: its frame with the internal columns, its names, layout and design.

    Attributes
    ----------
    frame
        The user's rows with ``_pr_score``, ``_pr_positive`` (and ``_pr_weight`` with a
        weight, ``_pr_group`` for ``by=()``), its data checks in the plan.
    columns
        The names of the log's columns.
    by
        The grouping: the caller's ``by=``, or the default of its :data:`Unit`.
    schema
        The user's schema, before the internal columns.
    has_class
        Whether the log has a class column. Without one it is binary and its label is
        the positive indicator; with one its layout is the positive class's rows only,
        both classes' rows, or several classes' (decided by the data, see
        :meth:`binary`).
    positive_class
        The positive class of a two-class log as the caller gave it (``None``: the
        larger class value, of each data set).
    weight
        How the weight was named (a column's name, an expression's output name), or
        ``None`` without weights.
    cluster
        The cluster column (several samples of one patient, image or user), checked by
        :func:`cluster_problems`, or ``None``.
    """

    frame: pl.LazyFrame
    columns: LogColumns
    by: list[str]
    schema: pl.Schema  # the user's schema, before the internal columns
    has_class: bool
    positive_class: Any = None
    weight: str | None = None
    original: FrameLike | None = None
    cluster: str | None = None

    @property
    def class_(self) -> str:
        """Name of the class column (only meaningful when ``has_class``)."""
        return self.columns.class_

    @property
    def label(self) -> str:
        """Name of the label column."""
        return self.columns.label

    @property
    def score(self) -> str:
        """Name of the user's score column."""
        return self.columns.score

    def has(self, name: str) -> bool:
        """Whether the user's log has column ``name``."""
        return name in self.schema

    @property
    def groups(self) -> list[str]:
        """The columns to group and join on: ``by``, or a constant column for ``by=()``.

        Polars joins need keys, so one group is a constant column (``_pr_group``,
        added by :func:`read_log`); select ``by`` for the output.
        """
        return self.by or [ONE_GROUP]

    # ----------------------------------------------------------------- the design

    @property
    def has_sample(self) -> bool:
        """Whether the log has a sample column (models can be paired sample by sample)."""
        return self.has(self.columns.sample)

    @property
    def has_dataset(self) -> bool:
        """Whether the log has a data set column."""
        return self.has(self.columns.dataset)

    @property
    def has_repeat(self) -> bool:
        """Whether the log has a repeat column (repeated cross-validation)."""
        return self.has(self.columns.repeat)

    @property
    def keys(self) -> list[str]:
        """A row's key but the class: (dataset, model, repeat, fold, sample) of those it has."""
        return key_columns(self.schema, self.columns)

    def default_by(self, unit: Unit = "fold") -> list[str]:
        """The default grouping of a function whose groups are ``unit`` (see :data:`Unit`)."""
        return design_by(self.schema, self.columns, unit)

    # ----------------------------------------------------------------- the layout

    @property
    def positive_rule(self) -> str:
        """How the positive class of a two-class log was chosen, in words."""
        if not self.has_class:
            return f"the label {self.label!r} is the positive indicator"
        if self.positive_class is not None:
            return f"positive class {self.positive_class!r} (given)"
        return "positive class: the larger class value"

    def unique(self, frame: pl.LazyFrame | None = None) -> pl.LazyFrame:
        """``frame`` (default: the log's), its keys checked unique.

        A (dataset, model, repeat, fold, sample, class) key holding two rows raises a
        ``ValueError`` naming the first repeated keys (at once for a ``DataFrame``, when
        collected for a ``LazyFrame``); a log without a sample column has no keys to
        check. The repeated keys come from one group-by and only they are quoted: a
        window and a string per row (:func:`unique_rows`) cost several times more.
        """
        rows = self.frame if frame is None else frame
        if not self.has_sample:
            return rows
        names = [*self.keys, *([self.class_] if self.has_class else [])]
        counts = rows.group_by(names).agg(pl.len().alias("_pr_rows"))
        repeated = counts.filter(pl.col("_pr_rows") > 1).select(names)
        message = repeated_key_message(names, first_keys(names))
        problem = pl.when(pl.len() > 0).then(message).otherwise(pl.lit("")).alias("problem")
        original = self.original if self.original is not None else rows
        return guarded(original, rows, repeated.select(problem), "", "")

    def with_classes(self, frame: pl.LazyFrame | None = None) -> pl.LazyFrame:
        """``frame`` with comparable ``_pr_class`` and ``_pr_label`` columns.

        A log without a class column is binary: its class is the positive value
        (``True`` or ``1``) and its label the indicator, so ``label == class`` marks the
        positives as ``_pr_positive`` does.
        """
        rows = self.frame if frame is None else frame
        if self.has_class:
            class_expr, label_expr = comparable(self.schema, self.class_, self.label)
        elif self.schema[self.label] == pl.Boolean:
            class_expr, label_expr = pl.lit(True), pl.col(self.label)
        else:
            class_expr, label_expr = pl.lit(1, pl.Int64), pl.col(self.label).cast(pl.Int64)
        return rows.with_columns(class_expr.alias(CLASS), label_expr.alias(LABEL))

    def binary(self, frame: pl.LazyFrame | None = None, *, caller: str = "") -> pl.LazyFrame:
        """The rows of the positive class: one score per sample, a binary problem.

        A log without a class column, or holding one class's rows, is returned as it
        is. A two-class log holding both classes' rows keeps the rows of its positive
        class: ``positive_class=`` if given, else the larger class value of each data
        set (1 over 0, ``True`` over ``False``). A log with more than two classes needs
        ``positive_class=`` (one-vs-rest); without it the plan fails naming the
        classes. Checked at once for a ``DataFrame``, when collected for a
        ``LazyFrame``.
        """
        rows = self.frame if frame is None else frame
        if not self.has_class:
            return rows
        class_ = pl.col(self.class_)
        within = [self.columns.dataset] if self.has_dataset else []
        if self.positive_class is not None:
            return rows.filter(class_ == pl.lit(self.positive_class))
        top = class_.max().over(within) if within else class_.max()
        kept = rows.filter(class_ == top)
        several = (
            rows.group_by(within or pl.lit(0).alias(ONE_GROUP))
            .agg(pl.col(self.class_).unique().sort().alias("_pr_classes"))
            .filter(pl.col("_pr_classes").list.len() > 2)
            .select(*within, pl.col("_pr_classes").cast(pl.List(pl.String)).list.join(", "))
        )
        what = f"more than two classes in {self.class_!r}:"
        found = problems([listing(several, [*within, "_pr_classes"], what)])
        name = caller or "this function"
        head = f"polaroc: {name} reads a two-class log's positive class, but the log has "
        tail = (
            ". Pass positive_class= to read one class against the rest (one-vs-rest), "
            "or keep two classes' rows."
        )
        return guarded(
            self.original if self.original is not None else rows, kept, found, head, tail
        )


def design_by(schema: pl.Schema, columns: LogColumns, unit: Unit = "fold") -> list[str]:
    """The default ``by=`` of a function whose groups are ``unit``, from the log's design.

    ``"fold"``: (dataset, model, repeat, fold); ``"model"``: (dataset, model);
    ``"dataset"``: (dataset); ``"log"``: (); each of the columns the log has (``model``
    and ``fold`` always where named). One rule for every function.
    """
    order = {
        "fold": [columns.dataset, columns.model, columns.repeat, columns.fold],
        "model": [columns.dataset, columns.model],
        "dataset": [columns.dataset],
        "log": [],
    }[unit]
    optional = {columns.dataset, columns.repeat}
    return [name for name in order if name not in optional or name in schema]


def default_by(schema: pl.Schema, columns: LogColumns) -> list[str]:
    """``(dataset, model, repeat, fold)``, of the columns the log has (model, fold always)."""
    return design_by(schema, columns, "fold")


def pooled_by(schema: pl.Schema, columns: LogColumns) -> list[str]:
    """The default groups of the pooled and averaged curves: ``(dataset, model)``."""
    return design_by(schema, columns, "model")


def key_columns(schema: pl.Schema, columns: LogColumns) -> list[str]:
    """The columns of a row's key but the class: (dataset, model, repeat, fold, sample).

    Of the columns the log has: the contract's "keys are unique" rule names at most
    one row per such key and class.
    """
    keys = [*default_by(schema, columns), columns.sample]
    return [name for name in keys if name in schema]


def repeated_key_message(names: Sequence[str], listed: pl.Expr) -> pl.Expr:
    """The error for repeated keys: the key columns ``names``, ``listed`` the first keys."""
    head = (
        f"polaroc: a ({', '.join(names)}) key holds more than one row of a class "
        "(keys must be unique): "
    )
    tail = (
        ". A repeated cross-validation logged without its repeat column? Add a 'repeat' "
        "column (fold ids may restart in each repeat), or make sample ids unique."
    )
    return pl.concat_str(pl.lit(head), listed, pl.lit(tail))


def first_keys(names: Sequence[str], rows: pl.Expr | None = None) -> pl.Expr:
    """The first three distinct keys of the columns ``names`` as ``(a, b); (c, d)``, sorted.

    Of the rows where ``rows`` holds (all rows by default): the listing of
    :func:`repeated_key_message`.
    """
    fields = [pl.col(c).cast(pl.String).fill_null("null") for c in names]
    keys = pl.format("({})", pl.concat_str(fields, separator=", "))
    keys = keys if rows is None else keys.filter(rows)
    return keys.unique().sort().head(3).str.join("; ")


def unique_rows(schema: pl.Schema, columns: LogColumns) -> pl.Expr:
    """For ``.filter``: ``True``, or a ``DataError`` naming the first repeated keys.

    For tables that read every row but have no per-sample aggregation of their own
    (the curves): a key (dataset, model, repeat, fold, sample, class) names at most one
    row. A log without a sample column has no keys to check (always ``True``).
    """
    if columns.sample not in schema:
        return pl.lit(True)
    names = key_columns(schema, columns)
    if columns.class_ in schema:
        names.append(columns.class_)
    repeated = pl.len().over(names) > 1
    return fail_if(repeated.any(), repeated_key_message(names, first_keys(names, repeated)))


def comparable(schema: pl.Schema, class_: str, label: str) -> tuple[pl.Expr, pl.Expr]:
    """Return class and label expressions that compare value by value, or raise."""
    c_dtype, l_dtype = schema[class_], schema[label]
    textual = (pl.String, pl.Categorical, pl.Enum)

    def is_text(dtype: pl.DataType) -> bool:
        return isinstance(dtype, textual) or dtype in textual

    if c_dtype == l_dtype:
        return pl.col(class_), pl.col(label)
    if is_text(c_dtype) and is_text(l_dtype):
        return pl.col(class_).cast(pl.String), pl.col(label).cast(pl.String)
    if all(d.is_integer() or d == pl.Boolean for d in (c_dtype, l_dtype)):
        return pl.col(class_).cast(pl.Int64), pl.col(label).cast(pl.Int64)
    msg = (
        f"class column {class_!r} ({c_dtype}) and label column {label!r} ({l_dtype}) "
        "cannot be compared; a row is positive when label == class, so cast one to the "
        f"other's dtype, e.g. pl.col({label!r}).cast(pl.{c_dtype})."
    )
    raise TypeError(msg)


def read_weight(
    log: FrameLike, weight: ColumnLike, schema: pl.Schema
) -> tuple[pl.Expr, pl.Expr | None]:
    """The weight (a column name or an expression) as ``Float64`` and its run-time check.

    The check is ``None`` once done: a ``DataFrame``'s weights are checked at once
    (``ValueError`` naming the column), a ``LazyFrame``'s when the query runs.
    """
    expr = to_expr(weight, argument="weight")
    if isinstance(weight, str):
        require_columns(schema, [weight])
    dtype = pl.LazyFrame(schema=schema).select(expr).collect_schema().dtypes()[0]
    w, check = as_weight(expr, dtype)
    if isinstance(log, pl.DataFrame):
        if log.select(bad_weight(w).any()).item():
            raise ValueError(weight_message(describe(expr)))
        return w, None
    return w, check


def usable_weight() -> pl.Expr:
    """Rows a weighted table keeps: a non-null weight above 0, or any weight on a NaN score.

    A weight of 0 is the row removed (as scikit-learn's ``_binary_clf_curve`` drops
    zero-weight samples); a NaN score is kept so that it still makes its group NaN.
    """
    w = pl.col(WEIGHT)
    return w.is_not_null() & ((w > 0.0) | pl.col(SCORE).is_nan())


def labels_without_class(
    frame: pl.LazyFrame, columns: LogColumns, schema: pl.Schema
) -> pl.LazyFrame:
    """One row, column ``problem``: the label values with no score row for their class.

    Within each (dataset, model) whose rows hold two or more class values, every label
    value must be one of them: a sample whose true class has no score cannot be ranked
    against it, nor scored by a proper scoring rule, and dropping it would count it in
    one term and not another. (A log holding one class's rows — the positive class of
    a binary log — has labels that are not classes: its negatives.) scikit-learn's
    ``roc_auc_score`` and ``log_loss`` raise alike.
    """
    within = [c for c in (columns.dataset, columns.model) if c in schema]
    class_, label = comparable(schema, columns.class_, columns.label)
    keys: list[str | pl.Expr] = [*within] if within else [pl.lit(0).alias(ONE_GROUP)]
    classes = frame.group_by(keys).agg(class_.drop_nulls().unique().alias("_pr_classes"))
    labels = frame.select(*within, label.alias("_pr_lab")).drop_nulls("_pr_lab").unique()
    if not within:
        labels = labels.with_columns(pl.lit(0).alias(ONE_GROUP))
    on = within or [ONE_GROUP]
    missing = (
        labels.join(classes, on=on, how="inner", nulls_equal=True)
        .filter(pl.col("_pr_classes").list.len() > 1)
        .filter(~pl.col("_pr_lab").is_in(pl.col("_pr_classes")))
        .select(*within, "_pr_lab")
    )
    what = f"label values with no score row for their class in {columns.class_!r}:"
    return problems([listing(missing, [*within, "_pr_lab"], what)])


def read_log(
    log: FrameLike,
    *,
    by: str | Iterable[str] | None = None,
    unit: Unit = "fold",
    columns: LogColumns | None = None,
    need: Sequence[str] = (),
    weight: ColumnLike | None = None,
    positive_class: Any = None,
    check_labels: bool = True,
    cluster: str | None = None,
    paired: bool = True,
    **names: Unpack[LogNames],
) -> Log:
    """Read ``log`` once: check it and add the internal score and positive columns.

    Parameters
    ----------
    log
        ``DataFrame`` or ``LazyFrame`` in the contract's long format.
    by
        Grouping columns; ``None`` means the default of ``unit`` (:func:`design_by`).
    unit
        What a default group is: ``"fold"`` (dataset, model, repeat, fold),
        ``"model"``, ``"dataset"`` or ``"log"``.
    columns
        The log's column names (defaults: the contract's); see :func:`columns_of`.
    **names
        Or the names as a public function receives them (its ``**columns``):
        ``model=``, ``fold=``, …, checked by :func:`columns_of`.
    need
        Extra columns the caller requires (e.g. ``columns.sample``).
    weight
        A case-weight column name or expression, added as ``_pr_weight``
        (``Float64``). A negative, NaN or infinite weight raises ``ValueError`` here
        for a ``DataFrame`` and an error naming it when a ``LazyFrame`` is collected.
        Null weights are kept (the tables drop those rows, see :func:`usable_weight`).
    positive_class
        The positive class of a two-class log (see :meth:`Log.binary`); it must be
        comparable with the class column (``TypeError`` otherwise).
    check_labels
        Check that every label value has a score row for its class
        (:func:`labels_without_class`); ``False`` only for a caller that reads no
        label (none today).
    cluster
        A column that groups samples into clusters (a patient's several samples): it
        must exist, hold no null and be constant within a sample (every class row and
        every model of it; :func:`cluster_problems`).
    paired
        With ``cluster``: whether a sample id names the same sample in every model
        (``True``: its cluster must agree between the models); ``False`` for an
        unpaired test, whose models' samples are their own.

    Raises
    ------
    ValueError
        A required column is missing (the message lists the log's columns); with a
        ``DataFrame``, a label value has no score row for its class, or the cluster
        column holds a null or differs within a sample.
    TypeError
        The score is not numeric, the class and label cannot be compared, or a log
        without a class column has a label that is not a Boolean or 0/1 indicator.
    """
    cols = columns_of(names) if columns is None else columns
    frame = as_lazy(log)
    schema = frame.collect_schema()
    group = design_by(schema, cols, unit) if by is None else as_names(by)
    require_columns(schema, [*group, cols.score, cols.label, *need])
    require_named(schema, cols)
    require_numeric(schema, cols.score)
    if cluster is not None:
        require_cluster(schema, cluster)

    has_class = cols.class_ in schema
    if has_class:
        class_expr, label_expr = comparable(schema, cols.class_, cols.label)
        positive = class_expr == label_expr
        check = None
        if positive_class is not None:
            _check_positive_class(schema, cols.class_, positive_class)
    else:
        if positive_class is not None:
            msg = (
                f"positive_class={positive_class!r} needs a {cols.class_!r} column in the "
                f"log; without one the label {cols.label!r} is the positive indicator"
            )
            raise ValueError(msg)
        positive, check = as_indicator(pl.col(cols.label), schema[cols.label])
        if schema[cols.label].is_integer():  # checked on the frame: a short message
            frame, positive = checked_indicator(log, cols.label), pl.col(cols.label) == 1
    internal = [pl.col(cols.score).cast(pl.Float64).alias(SCORE), positive.alias(POSITIVE)]
    weight_name = None
    if weight is not None:
        w, w_check = read_weight(log, weight, schema)
        weight_name = describe(to_expr(weight, argument="weight")).strip("'")
        internal.append(w.alias(WEIGHT))
        if w_check is not None:
            check = w_check if check is None else check & w_check
    if not group:
        internal.append(pl.lit(0, pl.Int8).alias(ONE_GROUP))
    if has_class and check_labels:
        found = labels_without_class(as_lazy(log), cols, schema)
        head = "polaroc: the log has "
        tail = (
            "; every label value needs the scores of its own class (as scikit-learn "
            "requires): add those rows, or drop the samples of that label."
        )
        frame = guarded(log, frame, found, head, tail)
    if cluster is not None:
        found = cluster_problems(as_lazy(log), cols, schema, cluster, paired=paired)
        tail = (
            f". A sample belongs to one cluster: give every row of it (each class, each "
            f"model) the same non-null {cluster!r} value."
        )
        frame = guarded(log, frame, found, f"polaroc: cluster={cluster!r}: ", tail)
    frame = frame.with_columns(internal)
    if check is not None:
        frame = frame.filter(check)
    return Log(
        frame=frame,
        columns=cols,
        by=group,
        schema=schema,
        has_class=has_class,
        positive_class=positive_class,
        weight=weight_name,
        original=log,
        cluster=cluster,
    )


def require_cluster(schema: pl.Schema, cluster: object) -> None:
    """Raise ``TypeError``/``ValueError`` unless ``cluster`` names a column of the log."""
    if not isinstance(cluster, str):
        msg = f"cluster must be a column name (a string) or None, got {cluster!r}"
        raise TypeError(msg)
    if cluster not in schema:
        have = ", ".join(schema.names()) or "no columns"
        msg = (
            f"cluster={cluster!r} is not a column of the log (it has: {have}); pass the "
            "name of the column that identifies each sample's cluster (e.g. a patient id)."
        )
        raise ValueError(msg)


def cluster_problems(
    frame: pl.LazyFrame,
    columns: LogColumns,
    schema: pl.Schema,
    cluster: str,
    *,
    paired: bool = True,
) -> pl.LazyFrame:
    """One row, column ``problem``: rows whose cluster is null, samples whose cluster varies.

    A sample is (dataset, repeat, fold, sample) of the columns the log has, whatever
    the class and, ``paired``, the model: paired models must put a sample in the same
    cluster (unpaired, each model's samples are its own). A log without a sample
    column has one sample per row (only nulls are checked).
    """
    design = [columns.dataset, columns.repeat, columns.fold, columns.sample]
    shown = [c for c in (*design, columns.model) if c in schema] or [cluster]
    nulls = frame.filter(pl.col(cluster).is_null()).select(shown).unique()
    what = f"null values in the rows of ({', '.join(shown)}):"
    parts = [listing(nulls, shown, what)]
    if columns.sample in schema:
        own = [] if paired else [columns.model]
        sample = [c for c in (*own, *design) if c in schema]
        varying = (
            frame.group_by(sample)
            .agg(pl.col(cluster).n_unique().alias("_pr_clusters"))
            .filter(pl.col("_pr_clusters") > 1)
        )
        what = f"samples ({', '.join(sample)}) in more than one cluster:"
        parts.append(listing(varying, sample, what))
    return problems(parts)


def _check_positive_class(schema: pl.Schema, class_: str, positive_class: Any) -> None:
    """A ``TypeError`` unless ``positive_class`` can be compared with the class column."""
    dtype = schema[class_]
    try:
        pl.DataFrame(schema={class_: dtype}).select(pl.col(class_) == pl.lit(positive_class))
    except (pl.exceptions.PolarsError, TypeError, ValueError) as error:
        msg = (
            f"positive_class={positive_class!r} cannot be compared with the class column "
            f"{class_!r} ({dtype}); pass one of its values"
        )
        raise TypeError(msg) from error
