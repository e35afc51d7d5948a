"""One rule for names (docs/architecture.md, "Names"), checked on every public callable.

A user guesses an argument's name and kind from the rule: ``by=`` is keyword-only and its
``None`` is explained; ``alpha`` is a significance level and ``level`` an interval's
coverage; replicates are ``n_boot``, ``n_perm`` or ``n_samples``; tests end in ``_test``
unless the design fixes an established spelling.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Iterator
from typing import Any

import pytest

ROOMS = (
    "polaroc",
    "polaroc.metrics",
    "polaroc.compare",
    "polaroc.plot",
    "polaroc.experiment",
    "polaroc.scale",
    "polaroc.report",
)

# names DESIGN.md fixes with the spelling of the literature (not ``*_test``)
ESTABLISHED_TESTS = {
    "paired_ttest",
    "paired_ttest_5x2cv",
    "combined_ftest_5x2cv",
    "bayes_ttest",
    "bayes_signed_rank",
    "anova",
    "duncan",
    "cochran_q",
    "delong_omnibus",
}
# spellings the rule replaces, and what to use instead
REPLACED = {
    "significance": "alpha",
    "sig_level": "alpha",
    "conf_level": "level",
    "confidence": "level",
    "n_bootstrap": "n_boot",
    "n_bootstraps": "n_boot",
    "boot_n": "n_boot",
    "n_permutations": "n_perm",
    "n_draws": "n_samples",
    "random_state": "seed",
    "groupby": "by",
    "group_by": "by",
}


def public_callables() -> Iterator[tuple[str, Callable[..., Any], inspect.Signature]]:
    """Every function the rooms export (classes are their own namespace), with its signature."""
    seen: set[int] = set()
    for room in ROOMS:
        module = importlib.import_module(room)
        for name in getattr(module, "__all__", ()):
            function = getattr(module, name)
            if isinstance(function, type) or not callable(function) or id(function) in seen:
                continue
            seen.add(id(function))
            yield f"{room}.{name}", function, inspect.signature(function)


CALLABLES = list(public_callables())


def test_the_rooms_export_functions():
    assert len(CALLABLES) > 100


@pytest.mark.parametrize(
    ("name", "signature"),
    [(n, s) for n, _, s in CALLABLES if "by" in s.parameters],
    ids=lambda x: x if isinstance(x, str) else "",
)
def test_by_is_keyword_only_and_explained(name, signature):
    by = signature.parameters["by"]
    assert by.kind is inspect.Parameter.KEYWORD_ONLY, f"{name}: by= must be keyword-only"
    function = dict((n, f) for n, f, _ in CALLABLES)[name]
    doc = inspect.getdoc(function) or ""
    if by.default is None:
        assert "None" in doc, f"{name}: say in the docstring what by=None means"


@pytest.mark.parametrize(("name", "signature"), [(n, s) for n, _, s in CALLABLES])
def test_arguments_follow_the_naming_rule(name, signature):
    for argument in signature.parameters:
        assert argument not in REPLACED, f"{name}({argument}=): call it {REPLACED[argument]}"
    for argument in ("alpha", "level"):
        default = signature.parameters.get(argument)
        if default is not None and isinstance(default.default, float):
            assert 0 < default.default < 1, f"{name}: {argument} is a probability"
    alpha = signature.parameters.get("alpha")
    if alpha is not None and isinstance(alpha.default, float):
        assert alpha.default <= 0.1, f"{name}: alpha is a significance level, not a coverage"
    level = signature.parameters.get("level")
    if level is not None and isinstance(level.default, float):
        assert level.default >= 0.5, f"{name}: level is an interval's coverage"


def test_comparison_tests_are_named_as_tests():
    from polaroc.compare.registry import REGISTRY

    for name, entry in REGISTRY.items():
        if entry.kind == "k-model" and name in {"anova"}:
            continue
        assert name.endswith("_test") or name in ESTABLISHED_TESTS, name
