"""Obuchowski's clustered variance and DeLong's tests of M between models (issue 36).

Oracles: ``tests.oracles.obuchowski_variance`` (the paper's formula, written directly),
``tests.oracles.hand_till_m_variance`` (brute-force components of M), and a bilinear
formula over clusters written here with NumPy loops (:func:`bilinear`), fed by
components counted here pair by pair (:func:`m_components`).
"""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import polars as pl
import pytest

import polaroc as pr
from tests.oracles import hand_till_m_variance, obuchowski_variance

# ------------------------------------------------------------------ brute force


def bilinear(h_a, h_b, labels, clusters) -> float:
    """Cov of the means of h_a, h_b: Σ_k I_k/(I_k−1) Σ_c E^a E^b + I/(I−1) Σ_c cross terms."""
    h_a, h_b = np.asarray(h_a, float), np.asarray(h_b, float)
    labels, clusters = np.asarray(labels, object), np.asarray(clusters, object)
    ks, cs = sorted(set(labels.tolist())), sorted(set(clusters.tolist()))
    e = {}
    for k in ks:
        in_k = labels == k
        n_k = in_k.sum()
        for c in cs:
            at = in_k & (clusters == c)
            if at.any():
                e[k, c] = (
                    (h_a[at] - h_a[in_k].mean()).sum() / n_k,
                    (h_b[at] - h_b[in_k].mean()).sum() / n_k,
                )
    total = 0.0
    for k in ks:
        cells = [v for (kk, _), v in e.items() if kk == k]
        i_k = len(cells)
        total += i_k / (i_k - 1) * sum(a * b for a, b in cells)
    i_all = len(cs)
    cross = 0.0
    for c in cs:
        cells = [v for (_, cc), v in e.items() if cc == c]
        cross += sum(a for a, _ in cells) * sum(b for _, b in cells)
        cross -= sum(a * b for a, b in cells)
    return total + i_all / (i_all - 1) * cross


def m_components(samples, classes, labels, scores) -> dict:
    """Each sample's structural component for M, pair by pair (every class row present)."""
    label_of = dict(zip(samples, labels, strict=True))
    score_of = {(s, c): x for s, c, x in zip(samples, classes, scores, strict=True)}
    present = sorted(set(labels))
    pairs = list(combinations(present, 2))
    h = dict.fromkeys(label_of, 0.0)
    for i, j in pairs:
        for a, b in ((i, j), (j, i)):  # every sample has every class: both directions
            w = 1.0 / (len(pairs) * 2)
            xs = [s for s in label_of if label_of[s] == a]
            ys = [s for s in label_of if label_of[s] == b]
            for x in xs:
                beats = [
                    (score_of[x, a] > score_of[y, a]) + 0.5 * (score_of[x, a] == score_of[y, a])
                    for y in ys
                ]
                h[x] += w * np.mean(beats)
            for y in ys:
                beaten = [
                    (score_of[x, a] > score_of[y, a]) + 0.5 * (score_of[x, a] == score_of[y, a])
                    for x in xs
                ]
                h[y] += w * np.mean(beaten)
    return h


# ------------------------------------------------------------------------ logs


def clustered_binary(rng: np.random.Generator, n: int = 80, patients: int = 25) -> pl.DataFrame:
    """Two models, several samples per patient (a patient effect shared by its samples)."""
    patient = rng.integers(0, patients, n)
    effect = rng.normal(size=patients)[patient]
    y = rng.random(n) < 0.4
    rows = []
    for model, shift in (("a", 1.0), ("b", 0.5)):
        x = np.round(shift * y + effect + rng.normal(size=n), 1)
        rows.append(
            pl.DataFrame(
                {"model": model, "fold": 0, "sample": np.arange(n), "patient": patient,
                 "score": x, "label": y}
            )
        )  # fmt: skip
    return pl.concat(rows)


def multiclass_models(
    rng: np.random.Generator, n: int = 45, classes: int = 3, models: int = 2
) -> pl.DataFrame:
    labels = rng.integers(0, classes, n)
    patient = rng.integers(0, 15, n)
    rows = []
    for m in range(models):
        for s, y in enumerate(labels):
            for c in range(classes):
                x = round(float(rng.normal((1.0 - 0.3 * m) * (c == y))), 1)
                rows.append(
                    {"model": f"m{m}", "fold": 0, "sample": s, "patient": int(patient[s]),
                     "class": c, "label": int(y), "score": x}
                )  # fmt: skip
    return pl.DataFrame(rows)


def one_model(log: pl.DataFrame, name: str) -> pl.DataFrame:
    return log.filter(pl.col("model") == name)


# --------------------------------------------------------------------- auc_se


def test_auc_se_with_clusters_is_obuchowskis(rng):
    log = one_model(clustered_binary(rng), "a")
    got = log.select(pr.auc_se("score", "label", cluster="patient")).item()
    _, expected = obuchowski_variance(log["score"], log["label"], log["patient"])
    assert got**2 == pytest.approx(expected, rel=1e-10)
    # per group, as an aggregation (clusters are ids within the group)
    grouped = pl.concat([log, log.with_columns(fold=pl.lit(1))])
    out = grouped.group_by("fold").agg(pr.auc_se("score", "label", cluster=pl.col("patient")))
    assert out["auc_se"].to_list() == pytest.approx([got, got], rel=1e-12)
    ci = log.select(pr.auc_ci("score", "label", cluster="patient")).unnest("auc_ci").row(0)
    auc = log.select(pr.auc("score", "label")).item()
    assert ci[0] == pytest.approx(auc)
    assert ci[1:] == pytest.approx((auc - 1.959963984540054 * got, auc + 1.959963984540054 * got))


def test_singleton_clusters_equal_delong(rng):
    log = one_model(clustered_binary(rng), "a").with_row_index("id")
    plain = log.select(pr.auc_se("score", "label")).item()
    single = log.select(pr.auc_se("score", "label", cluster="id")).item()
    assert single == pytest.approx(plain, rel=1e-12)
    log2 = clustered_binary(np.random.default_rng(5))
    for paired in (True, False):
        unclustered = pr.delong_test(log2, "a", "b", paired=paired).collect()
        clustered = pr.delong_test(log2, "a", "b", paired=paired, cluster="sample").collect()
        for name in ("statistic", "p_value", "var_a", "var_b", "cov", "ci_low"):
            a, b = unclustered[name].item(), clustered[name].item()
            assert (a is None) == (b is None)
            if a is not None:
                assert b == pytest.approx(a, rel=1e-10), name


def test_auc_se_cluster_errors(rng):
    log = one_model(clustered_binary(rng), "a")
    with pytest.raises(ValueError, match="method='delong'"):
        pr.auc_se("score", "label", method="hanley_mcneil", cluster="patient")
    holed = log.with_columns(patient=pl.when(pl.col("sample") == 3).then(None).otherwise("patient"))
    with pytest.raises(ValueError, match="cluster column 'patient'"):
        holed.select(pr.auc_se("score", "label", cluster="patient"))


# ---------------------------------------------------------------- delong_test


def test_clustered_delong_test_against_obuchowski_and_the_bilinear_formula(run, rng):
    log = clustered_binary(rng)
    out = run(log, lambda f: pr.delong_test(f, "a", "b", cluster="patient")).row(0, named=True)
    a, b = one_model(log, "a"), one_model(log, "b")
    for side, rows in (("a", a), ("b", b)):
        _, expected = obuchowski_variance(rows["score"], rows["label"], rows["patient"])
        assert out[f"var_{side}"] == pytest.approx(expected, rel=1e-10)

    def placements(rows: pl.DataFrame) -> np.ndarray:
        x, y = rows["score"].to_numpy(), rows["label"].to_numpy()
        kernel = (x[y][:, None] > x[~y][None, :]) + 0.5 * (x[y][:, None] == x[~y][None, :])
        v = np.empty(len(x))
        v[y], v[~y] = kernel.mean(axis=1), kernel.mean(axis=0)
        return v

    va, vb = placements(a), placements(b)
    labels, patients = a["label"].to_numpy(), a["patient"].to_numpy()
    expected = bilinear(va - vb, va - vb, labels, patients)
    got = out["var_a"] + out["var_b"] - 2 * out["cov"]
    assert got == pytest.approx(expected, rel=1e-9)
    assert out["cov"] == pytest.approx(bilinear(va, vb, labels, patients), rel=1e-9)
    z = (out["auc_a"] - out["auc_b"]) / math.sqrt(expected)
    assert out["statistic"] == pytest.approx(z, rel=1e-9)
    unpaired = pr.delong_test(log, "a", "b", paired=False, cluster="patient").collect()
    assert unpaired["var_a"].item() == pytest.approx(out["var_a"], rel=1e-12)


def test_cluster_must_agree_between_models_and_be_set(rng):
    log = clustered_binary(rng)
    moved = log.with_columns(
        patient=pl.when((pl.col("model") == "b") & (pl.col("sample") == 2))
        .then(999)
        .otherwise("patient")
    )
    with pytest.raises(ValueError, match=r"\(fold, sample\) in more than one cluster: \(0, 2\)"):
        pr.delong_test(moved, "a", "b", cluster="patient")
    holed = log.with_columns(patient=pl.when(pl.col("sample") == 4).then(None).otherwise("patient"))
    with pytest.raises(ValueError, match="cluster='patient': null values"):
        pr.delong_test(holed, "a", "b", cluster="patient")
    with pytest.raises(ValueError, match="cluster='patients' is not a column"):
        pr.delong_test(log, "a", "b", cluster="patients")


def test_renamed_cluster_column(rng):
    log = clustered_binary(rng)
    plain = pr.delong_test(log, "a", "b", cluster="patient").collect()
    renamed = pr.delong_test(
        log.rename({"patient": "subject", "sample": "id"}), "a", "b", cluster="subject", sample="id"
    ).collect()
    assert renamed["var_a"].item() == pytest.approx(plain["var_a"].item(), rel=1e-12)


# ------------------------------------------------------------------ M between models


def test_delong_test_of_m_against_evaluate_and_the_brute_force(run, rng):
    log = multiclass_models(rng)
    out = run(log, lambda f: pr.delong_test(f, "m0", "m1")).row(0, named=True)
    pooled = pr.evaluate(log, by=("model",)).collect().sort("model")
    assert [out["auc_a"], out["auc_b"]] == pytest.approx(pooled["auc"].to_list(), abs=1e-12)
    assert (out["n"], out["n_pos"], out["n_neg"], out["class"]) == (45, None, None, None)
    rows = {m: one_model(log, m) for m in ("m0", "m1")}
    for side, m in (("a", "m0"), ("b", "m1")):
        r = rows[m]
        _, var = hand_till_m_variance(r["sample"], r["class"], r["label"], r["score"])
        assert out[f"var_{side}"] == pytest.approx(var, rel=1e-9)
    h = {m: m_components(*(r[c].to_list() for c in ("sample", "class", "label", "score")))
         for m, r in rows.items()}  # fmt: skip
    samples = sorted(h["m0"])
    labels = rows["m0"].group_by("sample").agg(pl.col("label").first()).sort("sample")["label"]
    diff = np.array([h["m0"][s] - h["m1"][s] for s in samples])
    expected = bilinear(diff, diff, labels.to_list(), samples)
    assert out["var_a"] + out["var_b"] - 2 * out["cov"] == pytest.approx(expected, rel=1e-9)
    # clusters: the same bilinear formula over the patients
    patients = rows["m0"].group_by("sample").agg(pl.col("patient").first()).sort("sample")
    clustered = pr.delong_test(log, "m0", "m1", cluster="patient").collect().row(0, named=True)
    expected = bilinear(diff, diff, labels.to_list(), patients["patient"].to_list())
    got = clustered["var_a"] + clustered["var_b"] - 2 * clustered["cov"]
    assert got == pytest.approx(expected, rel=1e-9)
    # a positive class keeps the one-vs-rest binary reading
    binary = pr.delong_test(log, "m0", "m1", positive_class=1).collect()
    assert binary["class"].to_list() == [1]
    assert binary["n_pos"].item() == (rows["m0"].filter(pl.col("class") == 1)["label"] == 1).sum()


def test_omnibus_of_m_with_two_models_is_the_tests_z_squared(run, rng):
    log = multiclass_models(rng, models=3)
    pair = log.filter(pl.col("model") != "m2")
    z = pr.delong_test(pair, "m0", "m1").collect()["statistic"].item()
    omnibus = run(pair, lambda f: pr.delong_omnibus(f)).row(0, named=True)
    assert omnibus["statistic"] == pytest.approx(z**2, rel=1e-9)
    assert (omnibus["k"], omnibus["n"], omnibus["n_pos"], omnibus["class"]) == (2, 45, None, None)
    three = run(log, lambda f: pr.delong_omnibus(f)).row(0, named=True)
    assert three["k"] == 3
    assert three["df"] == 2
    assert three["statistic"] > 0


def test_m_test_needs_the_same_class_rows_in_both_models(rng):
    log = multiclass_models(rng)
    holed = log.filter(
        ~((pl.col("model") == "m1") & (pl.col("sample") == 0) & (pl.col("class") == 2))
    )
    with pytest.raises(ValueError, match="class rows missing from some model"):
        pr.delong_test(holed, "m0", "m1")
    moved = log.with_columns(
        patient=pl.when((pl.col("sample") == 1) & (pl.col("class") == 0))
        .then(99)
        .otherwise("patient")
    )
    with pytest.raises(ValueError, match="in more than one cluster: \\(0, 1\\)"):
        pr.delong_test(moved, "m0", "m1", cluster="patient")
