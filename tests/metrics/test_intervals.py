"""roc_ci and coords_ci read one class of a log with a class column, and say which.

Their numbers are checked against pROC in tests/proc/test_proc_infa.py and against
definitions in tests/compare/test_curve_tests.py; here, the positive class of a
two-class log (issue 32): ``positive_class=`` where given, else the larger class value,
stated by the output's ``class`` column. The oracle of each band is the same band on
the log holding only that class's rows, where no class has to be chosen.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polaroc as pr

Band = Callable[..., pl.LazyFrame]
BANDS: dict[str, Band] = {
    "roc_ci": lambda log, **kw: pr.roc_ci(log, specificities=[0.3, 0.8], n_boot=60, seed=4, **kw),
    "coords_ci": lambda log, **kw: pr.coords_ci(log, [0.2, 0.5], n_boot=60, seed=4, **kw),
}


def both_rows(rng: np.random.Generator, n: int = 80) -> pl.DataFrame:
    """Two folds of one model, each sample's scores for classes 0 and 1 (not complementary)."""
    parts = []
    for fold in range(2):
        label = rng.integers(0, 2, n)
        for cls in (0, 1):
            score = np.round(rng.random(n) + 0.6 * (label == cls), 2)
            parts.append(
                pl.DataFrame(
                    {
                        "model": "m",
                        "fold": fold,
                        "sample": np.arange(n),
                        "class": cls,
                        "score": score,
                        "label": label,
                    }
                )
            )
    return pl.concat(parts)


@pytest.mark.parametrize("name", list(BANDS))
def test_the_larger_class_is_read_by_default_and_shown(rng, name: str):
    band, log = BANDS[name], both_rows(rng)
    got = band(log).collect()
    assert got["class"].unique().to_list() == [1]
    alone = band(log.filter(pl.col("class") == 1)).collect()
    assert_frame_equal(got, alone)


@pytest.mark.parametrize("name", list(BANDS))
def test_positive_class_chooses_the_class_read(rng, name: str):
    band, log = BANDS[name], both_rows(rng)
    got = band(log, positive_class=0).collect()
    assert got["class"].unique().to_list() == [0]
    alone = band(log.filter(pl.col("class") == 0)).collect()
    assert_frame_equal(got, alone)
    assert not got.drop("class").equals(band(log).collect().drop("class"))


@pytest.mark.parametrize("name", list(BANDS))
def test_several_classes_need_positive_class(rng, name: str):
    log = both_rows(rng)
    three = pl.concat(
        [log, log.filter(pl.col("class") == 0).with_columns(pl.lit(2).alias("class"))]
    )
    three = three.with_columns(
        pl.when(pl.col("sample") == 0).then(2).otherwise("label").alias("label")
    )
    with pytest.raises(ValueError, match="more than two classes"):
        BANDS[name](three).collect()
    one_vs_rest: dict[str, Any] = {"positive_class": 2}
    assert BANDS[name](three, **one_vs_rest).collect()["class"].unique().to_list() == [2]
