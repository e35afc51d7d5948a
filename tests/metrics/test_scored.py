"""Scored AUC against Wu & Flach's (2005) worked example and a pair count."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import polaroc as pr
from tests.oracles import pair_auc, pair_sauc_parts

POS = [0.95, 0.86, 0.84]
NEG = [0.89, 0.15, 0.13, 0.10]


def example(positives):
    return pl.DataFrame(
        {"score": [*positives, *NEG], "label": [True] * len(positives) + [False] * len(NEG)}
    )


def test_wu_flach_example(run):
    out = run(
        example(POS),
        lambda f: f.select(pr.sauc_parts("score", "label"), pr.sauc("score", "label")),
    )
    parts = out["sauc_parts"].struct.unnest().row(0, named=True)
    assert round(parts["r_pos"], 4) == 0.7417
    assert round(parts["r_neg"], 4) == 0.1692
    assert round(parts["sauc"], 4) == 0.5725
    assert out["sauc"].item() == pytest.approx(parts["sauc"], abs=1e-15)


def test_wu_flach_second_example_same_auc_lower_sauc(run):
    moved = [0.95, 0.20, 0.16]
    query = lambda f: f.select(pr.auc("score", "label"), pr.sauc("score", "label"))
    before, after = run(example(POS), query), run(example(moved), query)
    assert round(after["sauc"].item(), 4) == 0.2375
    assert after["auc"].item() == pytest.approx(before["auc"].item(), abs=1e-15)
    assert after["auc"].item() == pytest.approx(pair_auc([*moved, *NEG], [1, 1, 1, 0, 0, 0, 0]))


@pytest.mark.parametrize("decimals", [None, 1])
def test_sauc_parts_match_pair_sums(run, rng, decimals):
    g = np.repeat(np.arange(5), 80)
    label = rng.random(g.size) < 0.5
    score = rng.beta(2, 2, g.size) * 0.7 + 0.3 * label
    if decimals is not None:
        score = np.round(score, decimals)
    df = pl.DataFrame({"g": g, "score": score, "label": label})
    out = run(df, lambda f: f.group_by("g").agg(pr.sauc_parts("score", "label")))
    got = {row["g"]: row["sauc_parts"] for row in out.iter_rows(named=True)}
    for (key,), part in df.partition_by("g", as_dict=True).items():
        expected = pair_sauc_parts(part["score"].to_numpy(), part["label"].to_numpy())
        for field, value in expected.items():
            assert got[key][field] == pytest.approx(value, abs=1e-12), field
