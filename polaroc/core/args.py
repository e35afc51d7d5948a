"""The argument vocabulary: every argument that recurs across polaroc, declared once.

Each recurring keyword (``n_boot``, ``seed``, ``alpha``, …) has one declaration here: what
it accepts, its package-wide default, and the one message for each kind of mistake. Public
functions are wrapped by :func:`validated`, which checks every argument whose name is
declared — so a new function taking ``n_boot=`` validates it exactly as the others do,
NumPy scalars included, without a line of its own (scikit-learn's ``validate_params`` and
scipy.stats' shared decorators do the same; here the declaration is by name, once for
the whole package).

Values are normalised on the way in: NumPy integers become ``int``, NumPy floats
``float``, so the function body sees Python numbers only.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar, overload

import polars as pl

__all__ = [
    "ADJUSTMENTS",
    "ALTERNATIVES",
    "DEFAULTS",
    "VOCABULARY",
    "Argument",
    "NotAnIntegerError",
    "check",
    "validated",
]

P = ParamSpec("P")
R = TypeVar("R")

ALTERNATIVES = ("two-sided", "greater", "less")
ADJUSTMENTS = ("holm", "bonferroni", "sidak", "hochberg", "hommel", "fdr_bh", "fdr_by")


def _is_integer(value: object) -> bool:
    """A Python or NumPy integer, never a ``bool``."""
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return False
    try:
        operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        return False
    return True


def _is_real(value: object) -> bool:
    """A Python or NumPy real number (integers included), never a ``bool``."""
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return False
    return isinstance(value, numbers.Real)


class NotAnIntegerError(ValueError, TypeError):
    """A real number where a count is expected (``n_boot=10.0``).

    Both a wrong value and the wrong kind of value, so either ``except`` catches it (as
    scikit-learn's ``InvalidParameterError`` is both).
    """


def _integer(minimum: int, what: str) -> Callable[[str, object], int]:
    def check(name: str, value: object) -> int:
        integer = _is_integer(value)
        if not integer or operator.index(value) < minimum:  # type: ignore[arg-type]
            msg = (
                f"{name} must be {what}: an integer of at least {minimum} (Python or NumPy), "
                f"got {value!r}"
            )
            if integer:
                raise ValueError(msg)
            raise NotAnIntegerError(msg) if _is_real(value) else TypeError(msg)
        return operator.index(value)  # type: ignore[arg-type]

    return check


def _error(value: object, message: str) -> Exception:
    """``TypeError`` for a value of the wrong kind, ``ValueError`` for a wrong value."""
    kind_ok = _is_real(value) or isinstance(value, str)
    return ValueError(message) if kind_ok else TypeError(message)


def _open_unit(what: str, example: str) -> Callable[[str, object], float]:
    def check(name: str, value: object) -> float:
        if not _is_real(value) or not 0.0 < float(value) < 1.0:  # type: ignore[arg-type]
            msg = (
                f"{name} must be {what}, a number strictly between 0 and 1 ({example}); "
                f"got {value!r}"
            )
            raise _error(value, msg)
        return float(value)  # type: ignore[arg-type]

    return check


def _seed(name: str, value: object) -> int | None:
    if value is None:
        return None
    if not _is_integer(value) or operator.index(value) < 0:  # type: ignore[arg-type]
        msg = (
            f"{name} must be None (fresh randomness) or an integer of at least 0 "
            f"(Python or NumPy), got {value!r}"
        )
        raise _error(value, msg)
    return operator.index(value)  # type: ignore[arg-type]


def _choice(options: tuple[str, ...], *, optional: bool = False) -> Callable[[str, object], Any]:
    def check(name: str, value: object) -> str | None:
        if value is None and optional:
            return None
        if not isinstance(value, str) or value not in options:
            listed = ", ".join(repr(o) for o in options)
            also = " or None" if optional else ""
            msg = f"{name} must be one of {listed}{also}; got {value!r}"
            raise _error(value, msg)
        return value

    return check


def _threshold(name: str, value: object) -> float | pl.Expr:
    if isinstance(value, pl.Expr):
        return value
    if not _is_real(value) or math.isnan(float(value)):  # type: ignore[arg-type]
        msg = (
            f"{name} must be a number (a score is predicted positive iff score >= {name}) "
            f"or a scalar Polars expression; got {value!r}"
        )
        raise _error(value, msg)
    return float(value)  # type: ignore[arg-type]


def _rope(name: str, value: object) -> float | None:
    if value is None:
        return None
    if not _is_real(value) or not 0.0 <= float(value) < math.inf:  # type: ignore[arg-type]
        msg = (
            f"{name} must be None or a finite number >= 0 (the half-width of the region of "
            f"practical equivalence, e.g. 0.01); got {value!r}"
        )
        raise _error(value, msg)
    return float(value)  # type: ignore[arg-type]


def _column(name: str, value: object) -> str | pl.Expr | None:
    if value is None or isinstance(value, str | pl.Expr):
        return value
    kind = type(value).__name__
    msg = f"{name} must be a column name or a Polars expression, got {kind}: {value!r}"
    raise TypeError(msg)


@dataclass(frozen=True)
class Argument:
    """One recurring argument: its check and its package-wide default."""

    name: str
    check: Callable[[str, object], Any]
    default: Any
    doc: str


_MISSING = object()

VOCABULARY: Mapping[str, Argument] = {
    a.name: a
    for a in (
        Argument("n_bins", _integer(1, "a number of bins"), _MISSING, "bins of a score range"),
        Argument("k", _integer(1, "a number of top classes"), _MISSING, "top-k accuracy's k"),
        Argument("n", _integer(2, "a number of curve points"), 512, "points of a smoothed curve"),
        Argument("n_boot", _integer(2, "a number of replicates"), 2000, "bootstrap replicates"),
        Argument("n_perm", _integer(2, "a number of permutations"), 2000, "permutations"),
        Argument("n_samples", _integer(1, "a number of draws"), 50_000, "posterior draws"),
        Argument("seed", _seed, None, "seed of the random draws; None = fresh randomness"),
        Argument("alpha", _open_unit("a significance level", "e.g. 0.05"), 0.05, "test level"),
        Argument("level", _open_unit("a coverage", "e.g. 0.95"), 0.95, "interval coverage"),
        Argument("threshold", _threshold, 0.5, "predicted positive iff score >= threshold"),
        Argument("alternative", _choice(ALTERNATIVES), "two-sided", "the alternative"),
        Argument("adjust", _choice(ADJUSTMENTS, optional=True), None, "p-value adjustment"),
        Argument("rope", _rope, None, "region of practical equivalence"),
        Argument("weight", _column, None, "case weights: a column name or an expression"),
    )
}
"""Every recurring argument, by keyword."""

DEFAULTS: Mapping[str, Any] = {
    name: a.default for name, a in VOCABULARY.items() if a.default is not _MISSING
}
"""The one default of each argument that has one across the package. ``n_bins`` and ``k``
have none: their defaults follow the function (10 bins for ``calibration``'s ECE, 5 for
``calibration_curve`` as scikit-learn's; see ``docs/architecture.md``). ``adjust`` and
``rope`` default to ``None`` (no adjustment, no ROPE) except where the contract gives a
function its own (``verdict``'s Holm, the Bayesian tests' ROPE of 0.01)."""


def check(name: str, value: object) -> Any:
    """``value`` of the declared argument ``name``, checked and normalised."""
    return VOCABULARY[name].check(name, value)


@overload
def validated(function: Callable[P, R]) -> Callable[P, R]: ...


@overload
def validated(
    function: None = None,
    *,
    own: Mapping[str, str] | None = None,
    defaults: Mapping[str, str] | None = None,
) -> Callable[[Callable[P, R]], Callable[P, R]]: ...


def validated(
    function: Callable[P, R] | None = None,
    *,
    own: Mapping[str, str] | None = None,
    defaults: Mapping[str, str] | None = None,
) -> Any:
    """Wrap a public function so that every declared argument it takes is checked.

    The arguments are bound to the signature, each one named in :data:`VOCABULARY` is
    replaced by its checked value (a wrong one raises the declaration's message), and
    the function runs on those. Arguments the vocabulary does not declare pass as they
    are. ``own`` names the arguments a function means otherwise than the vocabulary
    (``power_auc_test``'s ``alpha=None`` computes the level, as pROC's
    ``power.roc.test``), each with the reason; the function checks those itself.
    ``defaults`` names the declared arguments whose default the contract sets otherwise
    than :data:`DEFAULTS` for this function (``verdict``'s Holm adjustment, the Bayesian
    tests' ROPE), each with the reason; they are checked as usual. Use as
    ``@validated`` or ``@validated(own={...}, defaults={...})``.
    """
    if function is None:
        return lambda f: _wrap(f, own or {}, defaults or {})
    return _wrap(function, own or {}, defaults or {})


def _wrap(
    function: Callable[P, R], own: Mapping[str, str], defaults: Mapping[str, str]
) -> Callable[P, R]:
    signature = inspect.signature(function)
    exempt = dict(own)
    declared = [name for name in signature.parameters if name in VOCABULARY and name not in exempt]

    @functools.wraps(function)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        bound = signature.bind(*args, **kwargs)
        for name in declared:
            if name in bound.arguments:
                bound.arguments[name] = VOCABULARY[name].check(name, bound.arguments[name])
        return function(*bound.args, **bound.kwargs)

    wrapper.__validated__ = True  # type: ignore[attr-defined]
    wrapper.__own_arguments__ = exempt  # type: ignore[attr-defined]
    wrapper.__own_defaults__ = dict(defaults)  # type: ignore[attr-defined]
    return wrapper
