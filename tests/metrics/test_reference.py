"""Every public rank-based number equals its value before issue 33's counting core (1e-12).

The cases and their frozen outputs are in ``tests/metrics/reference/`` (see its
``cases.py``: the outputs were computed by the code as it stood before the old counting
paths were deleted). A case's output must have the same columns, dtypes, rows (in the
case's order), nulls, NaN and infinities, and finite values equal to 1e-12 relative
(absolute below 1).
"""

from __future__ import annotations

import polars as pl
import pytest

from tests.metrics.reference import cases

TOL = 1e-12
FROZEN = cases.frozen()
# Issue 36 defines evaluate's DeLong SE (and interval) of M for groups of several class
# blocks, null or the mean of the two directions' SEs before: those columns of the class
# logs' cases are tested against tests/oracles.hand_till_m_variance instead
# (tests/metrics/test_m_variance.py); every other column still equals its frozen value.
M_SE = ("auc_se_delong", "auc_ci_low", "auc_ci_high")
ISSUE_36 = {"evaluate_multi", "evaluate_multi_collapsed", "evaluate_by_model", "distributed_multi"}


def assert_close(got: pl.DataFrame, want: pl.DataFrame, *, where: str = "") -> None:
    """``got`` equals ``want``: columns, dtypes, nulls, NaN, ±inf; finite floats to 1e-12.

    A comparison test that reads one class of a class log now states it in a ``class``
    column (issue 32): the one column ``got`` may add.
    """
    added = [c for c in got.columns if c not in want.columns]
    assert added in ([], ["class"]), (where, added)
    got = got.drop(added)
    assert got.columns == want.columns, where
    assert got.schema == want.schema, where
    assert got.height == want.height, where
    for name in want.columns:
        a, b = got[name], want[name]
        label = f"{where}: {name}"
        if isinstance(b.dtype, pl.Struct):
            assert_close(a.struct.unnest(), b.struct.unnest(), where=label)
            continue
        assert a.is_null().equals(b.is_null()), label
        if not b.dtype.is_float():
            assert a.equals(b, check_names=False), label
            continue
        assert a.is_nan().fill_null(False).equals(b.is_nan().fill_null(False)), label
        infinite = b.is_infinite().fill_null(False)
        assert a.is_infinite().fill_null(False).equals(infinite), label
        assert a.filter(infinite).equals(b.filter(infinite)), label
        finite = b.is_finite().fill_null(False)
        diff = (a.filter(finite) - b.filter(finite)).abs()
        scale = b.filter(finite).abs().clip(lower_bound=1.0)
        worst = (diff / scale).max()
        assert worst is None or worst <= TOL, f"{label}: {worst}"


@pytest.mark.parametrize("name", sorted(cases.CASES))
def test_case_equals_its_frozen_output(name: str) -> None:
    assert name in FROZEN, (
        f"no frozen output for {name}; run python -m tests.metrics.reference.cases"
    )
    got, want = cases.run(name), FROZEN[name]
    if name in ISSUE_36:
        got, want = got.drop(M_SE), want.drop(M_SE)
    assert_close(got, want, where=name)


def test_every_frozen_case_still_runs() -> None:
    assert set(FROZEN) == set(cases.CASES)
