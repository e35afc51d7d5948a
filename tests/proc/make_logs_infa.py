"""Write the small logs that tests/proc/make_fixtures_infa.R reads (run once; outputs committed).

``PYTHONPATH=. python tests/proc/make_logs_infa.py`` writes three CSV files into tests/proc/:

* ``infa_paired.csv``: models a and b on the same 80 samples (continuous scores, no ties);
* ``infa_ties.csv``: the same shape with scores rounded to one decimal (many ties);
* ``infa_unpaired.csv``: model a on 60 samples, model b on 90 other samples.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

HERE = Path(__file__).parent


def paired(rng: np.random.Generator, n: int, digits: int | None) -> pl.DataFrame:
    label = (np.arange(n) % 5 < 2).astype(np.int64)  # 40% positives
    shared = rng.normal(size=n)
    parts = []
    for model, shift in (("a", 1.0), ("b", 0.6)):
        score = shared + shift * label + rng.normal(0, 0.8, n)
        if digits is not None:
            score = np.round(score, digits)
        parts.append(
            pl.DataFrame(
                {"model": model, "fold": 0, "sample": np.arange(n), "score": score, "label": label}
            )
        )
    return pl.concat(parts)


def unpaired(rng: np.random.Generator) -> pl.DataFrame:
    parts = []
    for model, n, shift in (("a", 60, 1.1), ("b", 90, 0.5)):
        label = (np.arange(n) % 3 == 0).astype(np.int64)
        score = shift * label + rng.normal(size=n)
        parts.append(
            pl.DataFrame(
                {"model": model, "fold": 0, "sample": np.arange(n), "score": score, "label": label}
            )
        )
    return pl.concat(parts)


def main() -> None:
    rng = np.random.default_rng(20261124)
    paired(rng, 80, None).write_csv(HERE / "infa_paired.csv", float_precision=6)
    paired(rng, 80, 1).write_csv(HERE / "infa_ties.csv", float_precision=1)
    unpaired(rng).write_csv(HERE / "infa_unpaired.csv", float_precision=6)


if __name__ == "__main__":
    main()
