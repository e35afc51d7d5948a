"""Small generated logs of the shapes a researcher brings: data sets, repeats, many classes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import polars as pl

MODELS = ("forest", "logreg", "stump")
SIGNAL = {"forest": 2.2, "logreg": 1.9, "stump": 0.8}


def design_log(
    classes: Mapping[str, int],
    *,
    repeats: int = 5,
    folds: int = 2,
    n: int = 60,
    models: Sequence[str] = MODELS,
    seed: int = 0,
    repeat_column: bool = True,
) -> pl.DataFrame:
    """A log of every data set in ``classes`` (name → number of classes), contract-shaped.

    Each data set gets ``repeats`` × ``folds`` test folds of ``n`` samples (sample ids
    unique within a repeat, the same samples in every model), one row per (model, fold,
    sample, class) — both classes' rows for two classes — with softmax probabilities
    whose true-class logit grows with the model's signal (forest > logreg > stump).
    """
    rng = np.random.default_rng(seed)
    parts = []
    for name, c in classes.items():
        for r in range(repeats):
            for f in range(folds):
                label = rng.integers(0, c, n)
                noise = rng.normal(size=(n, c))
                for m in models:
                    logits = noise + rng.normal(scale=0.6, size=(n, c))
                    logits += SIGNAL.get(m, 1.0) * np.eye(c)[label]
                    prob = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
                    for k in range(c):
                        parts.append(pl.DataFrame({
                            "dataset": name, "model": m, "repeat": r, "fold": f,
                            "sample": np.arange(n) + f * n, "class": k, "score": prob[:, k],
                            "label": label,
                        }))  # fmt: skip
    log = pl.concat(parts)
    return log if repeat_column else log.drop("repeat")


def ten_class_sets(**kwargs: object) -> pl.DataFrame:
    """Binary, three-class and ten-class data sets on a 5 × 2 design (the browser test's)."""
    return design_log({"binary": 2, "three": 3, "ten": 10}, **kwargs)  # type: ignore[arg-type]
