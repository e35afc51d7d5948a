"""Running a cross-validation experiment with scikit-learn and logging its scores.

polaroc reads score logs; this module writes one. :func:`cross_validate_log` fits
scikit-learn classifiers on the training part of every split and logs the scores
they give the test part, one row per (model, fold, sample, class): the long format
of the design contract, ready for :func:`polaroc.evaluate` and the comparison tables.
Every model sees the same splits, the *paired* design that Bradley (1997, §5) and
Aslan, Yıldız & Alpaydın (2009, §III) compare classifiers on. Repeated designs
(r × k cross-validation, Dietterich's 5 × 2) log a ``repeat`` column, so that the
comparison tests can pair models on (repeat, fold).

scikit-learn is imported only when the function is called: it is not a dependency
of polaroc itself, but an extra (``pip install 'polaroc[sklearn]'``, or scikit-learn
itself).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from polaroc.core.args import validated

__all__ = ["cross_validate_log"]


@validated
def cross_validate_log(
    models: Mapping[str, Any],
    x: Any,
    y: Any,
    *,
    cv: int | str | Any = 10,
    repeats: int | None = None,
    seed: int | None = None,
    method: str = "predict_proba",
    class_names: Sequence[str] | None = None,
    dataset: str | None = None,
) -> pl.DataFrame:
    """Fit scikit-learn classifiers over cross-validation splits and log their test scores.

    For every split and every model, a fresh copy of the estimator
    (``sklearn.base.clone``) is fitted on the training rows and scores the test rows
    with ``method``. Each test sample gets one row per class the estimator scores:
    ``predict_proba`` (or a multiclass ``decision_function``) logs every class;
    a binary ``decision_function``, which returns one column, logs the second class
    of ``classes_`` only (a binary log holding the positive class's rows, as the
    design contract allows). The rows are the log polaroc reads.

    A repeated design (``repeats=r``, ``cv="5x2"`` or a scikit-learn repeated
    splitter) runs r cross-validations, each on its own random stratified split, and
    logs a ``repeat`` column (``0 … r−1``) with fold ids restarting at 0 in every
    repeat; only a repeated design has that column. r × k designs give the corrected
    repeated t test of Nadeau & Bengio (2003) and Bouckaert & Frank (2004) more
    differences to work with; the 5 × 2 design is Dietterich's (1998), for
    :func:`polaroc.paired_ttest_5x2cv` and Alpaydın's (1999)
    :func:`polaroc.combined_ftest_5x2cv`.

    Parameters
    ----------
    models
        ``{name: estimator}``; the names become the ``model`` column. Estimators are
        cloned, never fitted in place.
    x, y
        Features (2-D array-like) and class labels (1-D), as for ``estimator.fit``.
    cv
        The splits: an int ``k`` for ``StratifiedKFold(k, shuffle=True,
        random_state=seed)`` (Bradley's stratified 10-fold design by default), or
        with ``repeats=r`` for ``RepeatedStratifiedKFold(n_splits=k, n_repeats=r,
        random_state=seed)`` (whose first repeat is the unrepeated split); ``"5x2"``
        for Dietterich's five repeats of stratified 2-fold; a scikit-learn splitter
        (anything with ``split(x, y)``, e.g. ``PredefinedSplit(pr_folds)`` to use
        fold ids from :func:`polaroc.stratified_folds`; a ``RepeatedStratifiedKFold``
        or ``RepeatedKFold`` is logged with its repeats); or an iterable of
        ``(train, test)`` index arrays. The ``fold`` column numbers the splits in
        order from 0, restarting in every repeat.
    repeats
        Number of repeats r, for a repeated design (adds the ``repeat`` column, even
        for ``repeats=1``). With an int ``cv``, every repeat is a new seeded stratified
        split; with a splitter or an iterable of splits, their splits are taken as r
        consecutive runs of equally many folds. ``None`` (default): no repeats, except
        for ``cv="5x2"`` (5) and scikit-learn's repeated splitters (their
        ``n_repeats``).
    seed
        ``random_state`` of the default splitter (the estimators' own seeds are
        theirs to set); ``None`` (default, as every seed of the package) draws fresh
        splits, an integer reproduces them.
    method
        The estimator method giving the scores: ``"predict_proba"`` (default),
        ``"decision_function"`` or ``"predict_log_proba"``. Higher must mean more
        evidence for the class.
    class_names
        Names for integer labels ``0 … c−1`` (e.g. ``load_iris().target_names``): the
        ``class`` and ``label`` columns then hold the names as a ``pl.Enum`` in this
        order. Without it they keep the labels' own values.
    dataset
        If given, a ``dataset`` column with this value is put first, so that logs of
        several data sets can be concatenated.

    Returns
    -------
    pl.DataFrame
        ``[dataset,] model`` (String), ``[repeat,]`` ``fold`` (Int64), ``sample``
        (Int64: the row of ``x``), ``class``, ``score`` (Float64), ``label``, sorted
        by model, repeat, fold, sample and class. Write it with ``write_parquet``
        and read it back lazily with :func:`polaroc.scan_logs`.

    Raises
    ------
    ImportError
        scikit-learn is not installed: it is the ``sklearn`` extra,
        ``pip install 'polaroc[sklearn]'`` (or ``pip install scikit-learn``).
    ValueError
        No models, ``x`` and ``y`` of different lengths, a split with an empty test
        part, labels outside ``class_names``, a one-column score for more than
        two classes, ``repeats`` below 1 or not dividing the number of splits, or
        ``repeats`` that contradicts ``cv`` (``"5x2"``, a repeated splitter).
    TypeError
        A model name that is not a string, or an estimator without ``method``.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> iris = load_iris()
    >>> log = pr.cross_validate_log(
    ...     {"naive_bayes": GaussianNB(), "tree": DecisionTreeClassifier(random_state=0)},
    ...     iris.data, iris.target, cv=5, seed=1, class_names=iris.target_names,
    ... )
    >>> log.drop("score").head(4)
    shape: (4, 5)
    ┌─────────────┬──────┬────────┬────────────┬────────┐
    │ model       ┆ fold ┆ sample ┆ class      ┆ label  │
    │ ---         ┆ ---  ┆ ---    ┆ ---        ┆ ---    │
    │ str         ┆ i64  ┆ i64    ┆ enum       ┆ enum   │
    ╞═════════════╪══════╪════════╪════════════╪════════╡
    │ naive_bayes ┆ 0    ┆ 4      ┆ setosa     ┆ setosa │
    │ naive_bayes ┆ 0    ┆ 4      ┆ versicolor ┆ setosa │
    │ naive_bayes ┆ 0    ┆ 4      ┆ virginica  ┆ setosa │
    │ naive_bayes ┆ 0    ┆ 5      ┆ setosa     ┆ setosa │
    └─────────────┴──────┴────────┴────────────┴────────┘

    Every sample is tested once per model, and the log chains into polaroc's tables
    (``auc`` is Hand & Till's M for these three classes):

    >>> log.group_by("model").agg(pl.col("sample").n_unique()).sort("model")
    shape: (2, 2)
    ┌─────────────┬────────┐
    │ model       ┆ sample │
    │ ---         ┆ ---    │
    │ str         ┆ u32    │
    ╞═════════════╪════════╡
    │ naive_bayes ┆ 150    │
    │ tree        ┆ 150    │
    └─────────────┴────────┘
    >>> per_fold = pr.evaluate(log)
    >>> per_fold.group_by("model").agg(
    ...     pl.len().alias("folds"), pl.col("auc").mean().round(2), pl.col("error").mean().round(3)
    ... ).sort("model").collect()
    shape: (2, 4)
    ┌─────────────┬───────┬──────┬───────┐
    │ model       ┆ folds ┆ auc  ┆ error │
    │ ---         ┆ ---   ┆ ---  ┆ ---   │
    │ str         ┆ u32   ┆ f64  ┆ f64   │
    ╞═════════════╪═══════╪══════╪═══════╡
    │ naive_bayes ┆ 5     ┆ 0.99 ┆ 0.047 │
    │ tree        ┆ 5     ┆ 0.96 ┆ 0.053 │
    └─────────────┴───────┴──────┴───────┘

    Dietterich's 5 × 2 design logs five repeats of two folds, every sample tested
    once per repeat:

    >>> nb = {"naive_bayes": GaussianNB()}
    >>> log_5x2 = pr.cross_validate_log(nb, iris.data, iris.target, cv="5x2")
    >>> log_5x2.group_by("repeat").agg(
    ...     pl.col("fold").unique().sort().alias("folds"), pl.col("sample").n_unique()
    ... ).sort("repeat")
    shape: (5, 3)
    ┌────────┬───────────┬────────┐
    │ repeat ┆ folds     ┆ sample │
    │ ---    ┆ ---       ┆ ---    │
    │ i64    ┆ list[i64] ┆ u32    │
    ╞════════╪═══════════╪════════╡
    │ 0      ┆ [0, 1]    ┆ 150    │
    │ 1      ┆ [0, 1]    ┆ 150    │
    │ 2      ┆ [0, 1]    ┆ 150    │
    │ 3      ┆ [0, 1]    ┆ 150    │
    │ 4      ┆ [0, 1]    ┆ 150    │
    └────────┴───────────┴────────┘
    """
    clone = _sklearn_clone()
    x_arr, y_arr = _check_data(x, y)
    _check_models(models, method)
    splits, repeats = _design(cv, repeats, x_arr, y_arr, seed)
    per_repeat = len(splits) // (repeats or 1)
    columns: dict[str, list[np.ndarray]] = {
        k: [] for k in ("model", "repeat", "fold", "sample", "class", "score", "label")
    }
    for split, (train, test) in enumerate(splits):
        repeat, fold = divmod(split, per_repeat)
        for name, template in models.items():
            estimator = clone(template).fit(x_arr[train], y_arr[train])
            classes, scores = _scores(estimator, method, x_arr[test], name)
            n_test, n_classes = scores.shape
            columns["model"].append(np.full(n_test * n_classes, name, dtype=object))
            columns["repeat"].append(np.full(n_test * n_classes, repeat, dtype=np.int64))
            columns["fold"].append(np.full(n_test * n_classes, fold, dtype=np.int64))
            columns["sample"].append(np.repeat(test, n_classes))
            columns["class"].append(np.tile(classes, n_test))
            columns["score"].append(scores.ravel())
            columns["label"].append(np.repeat(y_arr[test], n_classes))
    data = {k: np.concatenate(v) for k, v in columns.items()}
    schema: dict[str, Any] = {"model": pl.String, "repeat": pl.Int64, "fold": pl.Int64}
    schema["sample"] = pl.Int64
    schema["score"] = pl.Float64
    if class_names is not None:
        names = _class_names(class_names, data["class"], data["label"])
        data["class"], data["label"] = names[data["class"]], names[data["label"]]
        schema["class"] = schema["label"] = pl.Enum(list(names))
    log = pl.DataFrame(data, schema_overrides=schema)
    if repeats is None:
        log = log.drop("repeat")
    if dataset is not None:
        log = log.select(pl.lit(dataset, dtype=pl.String).alias("dataset"), pl.all())
    keys = ("model", "repeat", "fold", "sample", "class")
    return log.sort([key for key in keys if key in log.columns])


def _sklearn_clone() -> Any:
    try:
        from sklearn.base import clone
    except ImportError as err:  # tests/experiment/test_crossval.py hides scikit-learn
        msg = (
            "polaroc.cross_validate_log needs scikit-learn, which polaroc does not install "
            "by itself: pip install 'polaroc[sklearn]' (or pip install scikit-learn)"
        )
        raise ImportError(msg) from err
    return clone


def _check_data(x: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
    x_arr, y_arr = np.asarray(x), np.asarray(y)
    if y_arr.ndim != 1:
        msg = f"`y` must be one label per sample (1-D), got shape {y_arr.shape}"
        raise ValueError(msg)
    if len(x_arr) != len(y_arr):
        msg = f"`x` has {len(x_arr)} rows but `y` has {len(y_arr)} labels; give one per row"
        raise ValueError(msg)
    return x_arr, y_arr


def _check_models(models: Mapping[str, Any], method: str) -> None:
    if not models:
        msg = "`models` is empty; give {name: estimator}, e.g. {'nb': GaussianNB()}"
        raise ValueError(msg)
    names: Sequence[object] = list(models)  # user input: the str keys are not checked yet
    for name, estimator in zip(names, models.values(), strict=True):
        if not isinstance(name, str):
            msg = f"model names must be strings, got {type(name).__name__}: {name!r}"
            raise TypeError(msg)
        if not hasattr(estimator, method):
            scorers = ("predict_proba", "decision_function")
            has = [m for m in scorers if m != method and hasattr(estimator, m)]
            fix = (
                f"pick a method it has, e.g. method={has[0]!r}"
                if has
                else "it has no scoring method (predict_proba or decision_function)"
            )
            msg = f"model {name!r} ({type(estimator).__name__}) has no {method}(); {fix}"
            raise TypeError(msg)


def _design(
    cv: int | str | Any, repeats: int | None, x: np.ndarray, y: np.ndarray, seed: int | None
) -> tuple[list[tuple[Any, Any]], int | None]:
    """The splits in order, and the number of repeats they form (``None``: unrepeated)."""
    repeats = _check_repeats(repeats)
    if isinstance(cv, str):
        if cv != "5x2":
            msg = f"cv={cv!r} is not a design polaroc knows; use an int k, '5x2' or a splitter"
            raise ValueError(msg)
        cv, repeats = 2, _agree(repeats, 5, "cv='5x2' is five repeats of 2-fold")
    elif (implied := _splitter_repeats(cv)) is not None:
        repeats = _agree(repeats, implied, f"the splitter has n_repeats={implied}")
    if isinstance(cv, int | np.integer) and repeats is not None:
        from sklearn.model_selection import RepeatedStratifiedKFold

        cv = RepeatedStratifiedKFold(n_splits=int(cv), n_repeats=repeats, random_state=seed)
    splits = _splits(cv, x, y, seed)
    if repeats is not None and len(splits) % repeats:
        msg = (
            f"{len(splits)} splits do not make {repeats} repeats of equally many folds; "
            "give repeats that divide the number of splits"
        )
        raise ValueError(msg)
    return splits, repeats


def _check_repeats(repeats: object) -> int | None:
    if repeats is None:
        return None
    if isinstance(repeats, bool) or not isinstance(repeats, int | np.integer) or repeats < 1:
        msg = f"repeats must be a positive integer (or None), got {repeats!r}"
        raise ValueError(msg)
    return int(repeats)


def _splitter_repeats(cv: object) -> int | None:
    """``n_repeats`` of scikit-learn's RepeatedKFold / RepeatedStratifiedKFold, else None."""
    n_repeats = getattr(cv, "n_repeats", None)
    return n_repeats if hasattr(cv, "split") and isinstance(n_repeats, int) else None


def _agree(repeats: int | None, implied: int, why: str) -> int:
    if repeats is not None and repeats != implied:
        msg = f"repeats={repeats} contradicts cv: {why}; leave repeats out"
        raise ValueError(msg)
    return implied


def _splits(cv: int | Any, x: np.ndarray, y: np.ndarray, seed: int | None) -> list[tuple[Any, Any]]:
    if isinstance(cv, int | np.integer):
        from sklearn.model_selection import StratifiedKFold

        cv = StratifiedKFold(int(cv), shuffle=True, random_state=seed)
    pairs = cv.split(x, y) if hasattr(cv, "split") else cv
    splits = [(np.asarray(train), np.asarray(test)) for train, test in _pairs(pairs)]
    for fold, (_, test) in enumerate(splits):
        if len(test) == 0:
            msg = f"split {fold} has no test rows; every split needs a test part"
            raise ValueError(msg)
    return splits


def _pairs(pairs: Iterable[Any]) -> Iterable[tuple[Any, Any]]:
    for pair in pairs:
        train, test = pair
        yield train, test


def _scores(
    estimator: Any, method: str, x_test: np.ndarray, name: str
) -> tuple[np.ndarray, np.ndarray]:
    """The fitted estimator's classes and its (n_test, n_classes) score matrix."""
    classes = np.asarray(estimator.classes_)
    scores = np.asarray(getattr(estimator, method)(x_test), dtype=np.float64)
    if scores.ndim == 1:
        if len(classes) != 2:
            msg = (
                f"model {name!r} gave one score per sample for {len(classes)} classes; "
                "use a method that scores every class, e.g. method='predict_proba'"
            )
            raise ValueError(msg)
        return classes[1:], scores[:, None]
    return classes, scores


def _class_names(class_names: Sequence[str], *codes: np.ndarray) -> np.ndarray:
    """``class_names`` as an array to index with the integer class codes (checked)."""
    names = np.asarray([str(n) for n in class_names], dtype=object)
    values = np.unique(np.concatenate(codes))
    integral = np.issubdtype(values.dtype, np.integer)
    if not integral or values.min() < 0 or values.max() >= len(names):
        msg = (
            f"`class_names` names {len(names)} classes, so the labels must be the integers "
            f"0 … {len(names) - 1}; got {values[:10].tolist()}"
        )
        raise ValueError(msg)
    return names
