"""Write the small data files that make_fixtures_infb.R reads (seeded; run from the repo root).

    python tests/proc/make_logs_infb.py && Rscript tests/proc/make_fixtures_infb.R

``infb_smooth.csv``: binary data sets (``dataset``, ``score``, ``label``) for pROC's binormal
smooth: normal scores without ties, rounded (tied) scores, unequal group sizes, and the
ten-sample example of ``pr.smooth_roc``'s docstring. ``infb_pilot.csv``: a paired pilot of two
correlated models (``dataset``, ``sample``, ``label``, ``score_a``, ``score_b``) for pROC's
two-curve ``power.roc.test``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

HERE = Path(__file__).parent


def smooth_sets(rng: np.random.Generator) -> pl.DataFrame:
    parts = []

    def add(name: str, score: np.ndarray, label: np.ndarray) -> None:
        parts.append(pl.DataFrame({"dataset": name, "score": score, "label": label.astype(int)}))

    label = np.repeat([0, 1], [50, 40])
    add("normal", rng.normal(size=90) + 1.2 * label, label)
    label = np.repeat([0, 1], [60, 30])
    add("tied", np.round(rng.normal(size=90) + 0.8 * label, 1), label)
    label = np.repeat([0, 1], [200, 35])
    add("unbalanced", rng.normal(size=235) * (1 + 0.5 * label) + 1.5 * label, label)
    score = np.array([0.9, 0.8, 0.7, 0.6, 0.55, 0.5, 0.4, 0.3, 0.2, 0.1])
    add("docstring", score, np.array([1, 1, 0, 1, 1, 0, 1, 0, 0, 0]))
    return pl.concat(parts)


def pilots(rng: np.random.Generator) -> pl.DataFrame:
    parts = []
    for name, n_neg, n_pos, shift in (("pilot1", 40, 30, 1.0), ("pilot2", 70, 35, 0.6)):
        label = np.repeat([0, 1], [n_neg, n_pos])
        a = rng.normal(size=label.size) + shift * label
        b = 0.6 * a + 0.8 * rng.normal(size=label.size) + 0.3 * label
        parts.append(
            pl.DataFrame(
                {
                    "dataset": name,
                    "sample": np.arange(label.size),
                    "label": label,
                    "score_a": a,
                    "score_b": b,
                }
            )
        )
    return pl.concat(parts)


def main() -> None:
    rng = np.random.default_rng(20261124)
    smooth_sets(rng).write_csv(HERE / "infb_smooth.csv", float_precision=17)
    pilots(rng).write_csv(HERE / "infb_pilot.csv", float_precision=17)


if __name__ == "__main__":
    main()
