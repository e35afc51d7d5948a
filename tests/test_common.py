"""Every public function that reads a log, through the same generated families of tests.

scikit-learn's ``metrics/tests/test_common.py`` runs every metric through the same
invariances; this module does the same for the log contract (DESIGN.md, "The log" and
"Arguments and metrics, declared once"). The functions come from ``polaroc.__all__``:
each one whose first parameter is ``log`` is a case, with the few extra arguments it needs
in :data:`CASES`. A new public function that reads a log fails
:func:`test_every_log_reader_is_a_case` until it has a line there (or a reason in
:data:`LEFT_OUT`).

The families:

* every column renamed and passed by keyword gives the same table;
* a repeated (dataset, model, repeat, fold, sample, class) key raises ``ValueError``;
* a label value with no score row for its class raises ``ValueError`` naming it;
* every integer argument given as a NumPy integer gives the same table;
* a binary log holding only the positive class's rows, both classes' rows, or no class
  column gives the same table where the contract says so;
* a log with ``dataset`` and ``repeat`` columns runs under the default ``by=``, and each
  of its (dataset[, repeat]) slices equals the function run on that slice alone;
* eager, lazy in-memory and streaming runs agree;
* every argument of the vocabulary (``polaroc.core.args``) is checked by ``@validated``
  and defaults to the package's one default;
* a case weight given as an expression equals the same weight given as a column name.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polaroc as pr
from polaroc.core.args import DEFAULTS, VOCABULARY

# --------------------------------------------------------------------------- logs

NAMES = ("dataset", "repeat", "fold", "model", "sample", "class", "score", "label")
RENAMED = {name: f"{name}_x" for name in NAMES}
KEYWORD = {"class": "class_"}  # the keyword that names a column, where it differs


def binary_log(
    layout: str = "positive",
    *,
    seed: int = 7,
    datasets: tuple[str, ...] = ("d1", "d2"),
    repeats: int = 2,
    folds: int = 3,
    models: tuple[str, ...] = ("a", "b", "c"),
    n: int = 24,
) -> pl.DataFrame:
    """A binary log of repeated cross-validation on two data sets.

    Sample ids restart in every (dataset, repeat, fold) and are shared by the models, so
    that models pair sample by sample. Scores are probabilities rounded to two decimals
    (ties), never exactly 0.5 (where the argmax rule and ``score >= 0.5`` part ways).
    ``layout``: ``"positive"`` (class 1's rows only), ``"both"`` (class 0's rows too,
    with the complementary score) or ``"none"`` (no class column, a Boolean label).
    """
    rng = np.random.default_rng(seed)
    parts = []
    for d, dataset in enumerate(datasets):
        for r in range(repeats):
            for f in range(folds):
                label = np.r_[np.zeros(n // 2), np.ones(n - n // 2)].astype(np.int64)
                rng.shuffle(label)
                for m, model in enumerate(models):
                    signal = (0.6 + 0.4 * m + 0.3 * d) * label + rng.normal(0, 1, n)
                    score = np.round(1 / (1 + np.exp(-signal)), 2)
                    score = np.where(score == 0.5, 0.51, score)
                    parts.append(
                        pl.DataFrame(
                            {
                                "dataset": dataset,
                                "repeat": r,
                                "fold": f,
                                "model": model,
                                "sample": np.arange(n),
                                "class": 1,
                                "score": score,
                                "label": label,
                            }
                        )
                    )
    log = pl.concat(parts)
    if layout == "both":
        other = log.with_columns(
            pl.lit(0).alias("class"), (1.0 - pl.col("score")).round(2).alias("score")
        )
        log = pl.concat([log, other])
    elif layout == "none":
        log = log.drop("class").with_columns(pl.col("label") == 1)
    return log


def multiclass_log(*, seed: int = 11, classes: int = 3) -> pl.DataFrame:
    """Three classes' probabilities per sample, same design as :func:`binary_log`."""
    rng = np.random.default_rng(seed)
    parts = []
    for dataset in ("d1", "d2"):
        for r in range(2):
            for f in range(3):
                n = 18
                label = np.arange(n) % classes
                rng.shuffle(label)
                for m, model in enumerate(("a", "b", "c")):
                    logits = rng.normal(0, 1, (n, classes))
                    logits[np.arange(n), label] += 0.8 + 0.5 * m
                    p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
                    p = np.round(p, 3)
                    parts.append(
                        pl.DataFrame(
                            {
                                "dataset": dataset,
                                "repeat": r,
                                "fold": f,
                                "model": model,
                                "sample": np.repeat(np.arange(n), classes),
                                "class": np.tile(np.arange(classes), n),
                                "score": p.ravel(),
                                "label": np.repeat(label, classes),
                            }
                        )
                    )
    return pl.concat(parts)


# -------------------------------------------------------------------------- cases


@dataclass(frozen=True)
class Case:
    """A public function that reads a log, and how the families call it.

    ``args`` follow the log positionally (e.g. the two models of a paired test);
    ``kwargs`` are what it needs to run small and fast. ``multiclass``: it reads a log of
    three classes too (the label check runs on that log). ``layouts``: whether the three
    binary layouts give the same table (``False`` where the contract says they differ;
    ``why`` says how); ``differs``: the columns that differ between the layouts by
    the function's definition (left out of that comparison only; ``why`` says how). ``slices``: the columns whose slices equal the function run on the
    slice alone (its default groups hold them). ``class_key``: the function's output keeps
    a class column for a log that has one (one table per class). ``added``: columns the
    function needs beyond the log's, built from the log's columns (``name`` gives the
    name a column has in the call).
    """

    name: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    multiclass: bool = False
    layouts: bool = True
    differs: tuple[str, ...] = ()
    slices: tuple[str, ...] = ("dataset", "repeat")
    class_key: bool = False
    why: str = ""
    added: Callable[[Callable[[str], str]], dict[str, pl.Expr]] | None = None

    @property
    def function(self) -> Callable[..., Any]:
        found: Callable[..., Any] = getattr(pr, self.name)
        return found

    def __call__(self, log: pl.DataFrame | pl.LazyFrame, **extra: Any) -> pl.LazyFrame:
        if self.added is not None:  # columns of its own, from the log's (as named in extra)
            log = log.with_columns(**self.added(lambda c: extra.get(KEYWORD.get(c, c), c)))
        result: pl.LazyFrame = self.function(log, *self.args, **{**self.kwargs, **extra})
        return result


def split_by_parity(sample: str) -> pl.Expr:
    """``select_models``' parts: even samples validate, odd samples test."""
    even = pl.col(sample) % 2 == 0
    return pl.when(even).then(pl.lit("validation")).otherwise(pl.lit("test"))


PAIR = ("a", "b")
CASES = [
    Case("evaluate", multiclass=True),
    Case("pairwise_auc", multiclass=True, layouts=False, why="both rows add A(0|1)"),
    Case("multiclass_auc", multiclass=True),
    Case(
        "proportion_correct",
        multiclass=True,
        differs=("c2",),
        why="c2 compares a sample's two class scores: null with one score row per sample",
    ),
    Case("roc_curve", class_key=True),
    Case("pooled_roc", class_key=True, slices=("dataset",)),
    Case("average_roc", class_key=True, slices=("dataset",)),
    Case("pooling_table", class_key=True, slices=("dataset",)),
    Case("pr_curve", class_key=True),
    Case("pooled_pr_curve", class_key=True, slices=("dataset",)),
    Case("threshold_table", class_key=True),
    Case("det_curve", class_key=True),
    Case("gain_curve", class_key=True),
    Case("lift_curve", class_key=True),
    Case("youden_point", class_key=True),
    Case("closest_topleft_point", class_key=True),
    Case("max_metric_point", class_key=True),
    Case("min_cost_point", class_key=True),
    Case("neyman_pearson_point", kwargs={"min_sensitivity": 0.8}, class_key=True),
    Case("smooth_roc", class_key=True),
    Case("calibration", multiclass=True),
    Case("calibration_curve", class_key=True),
    Case("decision_curve"),
    Case("top_k_accuracy", kwargs={"k": 1}, multiclass=True),  # k >= 2: binary is all right
    Case("roc_ci", kwargs={"n_boot": 40, "seed": 3}),
    Case("coords_ci", args=([0.3, 0.7],), kwargs={"n_boot": 40, "seed": 3}),
    Case(
        "bootstrap",
        kwargs={"n_boot": 20, "seed": 3},
        multiclass=True,
        differs=("se", "ci_low", "ci_high"),
        why="the draws hash the label's value: a Boolean label draws other replicates than 0/1",
    ),
    Case("delong_test", args=PAIR, multiclass=True, slices=("dataset",)),
    Case(
        "delong_test",
        args=PAIR,
        kwargs={"cluster": "patient"},
        multiclass=True,
        slices=("dataset",),
        added=lambda name: {"patient": pl.col(name("sample")) // 3},
    ),
    Case("delong_omnibus", multiclass=True, slices=("dataset",)),
    Case("bootstrap_test", args=PAIR, kwargs={"n_boot": 40, "seed": 3}, slices=("dataset",)),
    Case("venkatraman_test", args=PAIR, kwargs={"n_perm": 40, "seed": 3}, slices=("dataset",)),
    Case("power_auc_test", args=PAIR, slices=("dataset",)),
    Case("mcnemar_test", args=PAIR, multiclass=True, slices=("dataset",)),
    Case("cochran_q", multiclass=True, slices=("dataset",)),
    Case("select_models", added=lambda name: {"split": split_by_parity(name("sample"))}),
    Case("evaluate_in_batches", kwargs={"max_rows": 500}, multiclass=True),
]
"""Every public function that reads a log, with what it needs (one line per function)."""

LEFT_OUT = {
    "plan_batches": "plans batches of a log's groups; reads no score (tested in tests/scale)",
    "scan_logs": "finds Parquet files; returns the log others read",
}
"""Public functions whose first parameter is a log but that are not cases, and why."""

BY_NAME = {case.name: case for case in CASES}


def test_every_log_reader_is_a_case():
    readers = {
        name
        for name in pr.__all__
        if callable(obj := getattr(pr, name))
        and next(iter(inspect.signature(obj).parameters), None) == "log"
    }
    missing = sorted(readers - BY_NAME.keys() - LEFT_OUT.keys())
    assert not missing, f"add a Case line (or a LEFT_OUT reason) for: {missing}"
    stale = sorted((BY_NAME.keys() | LEFT_OUT.keys()) - readers - {"scan_logs"})
    assert not stale, f"no longer public log readers: {stale}"


# ------------------------------------------------------------------------ helpers


def collected(result: pl.LazyFrame | pl.DataFrame, engine: str = "in-memory") -> pl.DataFrame:
    out = result.collect(engine=engine) if isinstance(result, pl.LazyFrame) else result
    return out.sort(out.columns, nulls_last=True, maintain_order=True)


def assert_same(left: pl.DataFrame, right: pl.DataFrame) -> None:
    left = left.sort(left.columns, nulls_last=True)
    right = right.select(left.columns).sort(left.columns, nulls_last=True)
    assert_frame_equal(left, right, check_exact=False, rel_tol=1e-9, abs_tol=1e-12)


def run(case: Case, log: pl.DataFrame | pl.LazyFrame, **extra: Any) -> pl.DataFrame:
    return collected(case(log, **extra))


def renamed_keywords(log: pl.DataFrame) -> dict[str, str]:
    return {KEYWORD.get(c, c): RENAMED[c] for c in log.columns if c in RENAMED}


def parametrize(cases: list[Case] = CASES) -> pytest.MarkDecorator:
    return pytest.mark.parametrize("case", cases, ids=[c.name for c in cases])


# ----------------------------------------------------------------------- families


@parametrize()
def test_renamed_columns_give_the_same_table(case: Case):
    log = binary_log("both")
    expected = run(case, log)
    got = run(case, log.rename(RENAMED), **renamed_keywords(log))
    back = {new: old for old, new in RENAMED.items()}
    assert_same(expected, got.rename({c: back[c] for c in got.columns if c in back}))


@parametrize()
def test_a_repeated_key_raises(case: Case):
    # a repeated cross-validation logged without its repeat column
    log = binary_log("positive").drop("repeat")
    with pytest.raises(ValueError, match="repeat"):
        run(case, log)


@parametrize()
def test_a_label_without_its_class_scores_raises(case: Case):
    # model b logs no scores for one class that is some of its samples' label
    if case.multiclass:
        log = multiclass_log().filter((pl.col("class") != 2) | (pl.col("model") != "b"))
    else:
        stray = (pl.col("sample") == 0) & (pl.col("model") == "b")
        log = binary_log("both").with_columns(
            pl.when(stray).then(2).otherwise(pl.col("label")).alias("label")
        )
    with pytest.raises(ValueError, match="no score row for their class"):
        run(case, log)


def integer_arguments(case: Case) -> dict[str, Any]:
    """The case's integer arguments of the vocabulary, as NumPy integers."""
    signature = inspect.signature(case.function)
    found = {}
    for name, parameter in signature.parameters.items():
        declared = VOCABULARY.get(name)
        if declared is None or name in ("threshold", "alpha", "level", "rope"):
            continue
        value = case.kwargs.get(name, parameter.default)
        if isinstance(value, int) and not isinstance(value, bool):
            found[name] = np.int64(value)
    return found


@parametrize()
def test_numpy_integers_are_integers(case: Case):
    numpy = integer_arguments(case)
    if not numpy:
        pytest.skip(f"{case.name} takes no integer argument")
    log = binary_log("positive")
    assert_same(run(case, log), run(case, log, **numpy))


@parametrize([c for c in CASES if c.layouts])
def test_the_binary_layouts_agree(case: Case):
    tables = {}
    for layout in ("positive", "both", "none"):
        table = run(case, binary_log(layout))
        if "class" in table.columns:
            if case.class_key and layout == "both":
                table = table.filter(pl.col("class") == 1)
            table = table.drop("class")
        tables[layout] = table.drop(case.differs)
    assert_same(tables["positive"], tables["both"])
    assert_same(tables["positive"], tables["none"])


@parametrize()
def test_each_slice_equals_the_function_on_that_slice(case: Case):
    log = multiclass_log() if case.multiclass else binary_log("positive")
    whole = run(case, log)
    for key, part in log.group_by(list(case.slices)):
        where = dict(zip(case.slices, key, strict=True))
        assert all(c in whole.columns for c in case.slices), (case.name, whole.columns)
        expected = whole.filter(**where)
        assert expected.height > 0, where
        assert_same(expected, run(case, part))


@parametrize()
@pytest.mark.parametrize("engine", ["in-memory", "streaming"])
def test_lazy_and_streaming_equal_eager(case: Case, engine: str):
    log = binary_log("positive")
    eager = case(log)
    eager = eager.collect() if isinstance(eager, pl.LazyFrame) else eager
    assert_same(collected(eager), collected(case(log.lazy()), engine))


def takes(case: Case, name: str) -> bool:
    return name in inspect.signature(case.function).parameters


@parametrize()
def test_the_vocabulary_is_validated_with_its_defaults(case: Case):
    # one declaration per recurring argument (core/args.py): checked by @validated
    # (NumPy scalars accepted, one message per mistake) with the package's one default
    own = getattr(case.function, "__own_arguments__", {})
    declared = [
        n for n in inspect.signature(case.function).parameters if n in VOCABULARY and n not in own
    ]
    if not declared:
        pytest.skip(f"{case.name} takes no argument of the vocabulary")
    assert getattr(case.function, "__validated__", False), f"decorate {case.name} @validated"
    parameters = inspect.signature(case.function).parameters
    for name in declared:
        if name in DEFAULTS and parameters[name].default is not inspect.Parameter.empty:
            assert parameters[name].default == DEFAULTS[name], (case.name, name)


def vocabulary_takers() -> list[str]:
    """Every public function that takes an argument of the vocabulary."""
    out = []
    for name in pr.__all__:
        function = getattr(pr, name)
        if not inspect.isfunction(function):
            continue
        if any(p in VOCABULARY for p in inspect.signature(function).parameters):
            out.append(name)
    return out


@pytest.mark.parametrize("name", vocabulary_takers())
def test_every_public_function_declares_its_vocabulary_once(name: str):
    # not only the log readers: expressions and the tests on per-fold tables alike
    function = getattr(pr, name)
    assert getattr(function, "__validated__", False), f"decorate {name} @validated"
    own = function.__own_arguments__
    own_defaults = function.__own_defaults__
    for parameter in inspect.signature(function).parameters.values():
        if parameter.name not in DEFAULTS or parameter.name in own:
            continue
        if parameter.default is inspect.Parameter.empty:
            continue
        if parameter.name in own_defaults:
            assert parameter.default != DEFAULTS[parameter.name], (name, "declared needlessly")
            continue
        assert parameter.default == DEFAULTS[parameter.name], (name, parameter.name)


def with_weights(log: pl.DataFrame) -> pl.DataFrame:
    """A case weight per sample (the same on each of its class rows): 1, 2 or 3."""
    w = (pl.col("sample") % 3 + 1).cast(pl.Float64)
    return log.with_columns(w.alias("w"), (w / 4).alias("w_quarter"))


@parametrize([c for c in CASES if takes(c, "weight")])
def test_a_weight_expression_equals_its_column(case: Case):
    log = with_weights(binary_log("both"))
    by_name = run(case, log, weight="w")
    assert_same(by_name, run(case, log, weight=pl.col("w_quarter") * 4))
    assert_same(by_name, run(case, log.lazy(), weight=pl.col("w")))
    unweighted = run(case, log)
    shared = [c for c in by_name.columns if c in unweighted.columns]
    assert not by_name.select(shared).equals(unweighted.select(shared)), case.name
