"""Figures are built from real tables and hold what they claim to show."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import polars as pl
import pytest

import polaroc as pr
from polaroc import plot


@pytest.fixture(scope="module")
def binary_log() -> pl.LazyFrame:
    return pl.scan_parquet(pr.demo_log_path()).filter(pl.col("class") == "malignant")


def test_roc_folds_draws_every_fold_pooled_and_average(binary_log, tmp_path):
    fig = plot.roc_folds(
        pr.roc_curve(binary_log), pr.pooled_roc(binary_log), pr.average_roc(binary_log)
    )
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert len(visible) == 6  # one panel per model
    # 10 fold curves + average + pooled + diagonal
    assert len(visible[0].lines) == 13
    pooled = pr.pooled_roc(binary_log).filter(pl.col("model") == "forest").collect()
    dashed = next(ln for ln in visible[0].lines if ln.get_linestyle() == "--")
    assert list(dashed.get_xdata()) == pooled["fpr"].to_list()
    fig.savefig(tmp_path / "roc.png")
    assert (tmp_path / "roc.png").stat().st_size > 10_000


def test_auc_distributions_orders_models_by_mean(binary_log):
    table = (
        binary_log.group_by("model", "fold")
        .agg(pr.auc("score", pl.col("label") == "malignant"))
        .collect()
    )
    fig = plot.auc_distributions(table)
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    expected = table.group_by("model").agg(pl.col("auc").mean()).sort("auc", descending=True)
    assert labels == expected["model"].to_list()


def test_duncan_groups_draws_one_bar_per_letter():
    table = pl.DataFrame(
        {
            "model": ["x", "y", "z", "w"],
            "mean": [0.9, 0.88, 0.8, 0.7],
            "rank": [1, 2, 3, 4],
            "groups": ["a", "ab", "b", "c"],
        }
    )
    fig = plot.duncan_groups(table)
    means, subsets = fig.axes
    # the subsets sit beside the means (to their right), not below them
    assert subsets.get_position().x0 > means.get_position().x1
    assert [t.get_text() for t in means.get_yticklabels()] == ["x", "y", "z", "w"]
    bars = subsets.lines
    assert len(bars) == 3
    assert [t.get_text() for t in subsets.get_xticklabels()] == ["a", "b", "c"]
    # subset "b" spans y and z (rows 1..2)
    spans = sorted((min(b.get_ydata()), max(b.get_ydata())) for b in bars)
    assert spans[1] == pytest.approx((0.75, 2.25))


def test_pairwise_heatmap_has_one_cell_per_pair():
    table = pl.DataFrame(
        {"model": ["m"] * 3, "class_i": [0, 0, 1], "class_j": [1, 2, 2], "a": [0.9, 0.8, 0.6]}
    )
    fig = plot.pairwise_heatmap(table)
    ax = fig.axes[0]
    image = ax.images[0].get_array()
    # rows are classes 1, 2 (i), columns classes 0, 1 (j < i): each pair once
    assert [t.get_text() for t in ax.get_yticklabels()] == ["1", "2"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "1"]
    assert image[0, 0] == pytest.approx(0.9)  # A(0, 1)
    assert image[1, 0] == pytest.approx(0.8)  # A(0, 2)
    assert image[1, 1] == pytest.approx(0.6)  # A(1, 2)
    assert bool(image.mask[0, 1])  # above the diagonal: empty
    assert sorted(t.get_text() for t in ax.texts) == ["0.60", "0.80", "0.90"]


def test_pairwise_heatmap_of_ten_classes_keeps_its_labels_apart():
    rng = np.random.default_rng(3)
    pairs = [(i, j) for i in range(10) for j in range(i + 1, 10)]
    table = pl.DataFrame({
        "model": ["m"] * len(pairs), "class_i": [i for i, _ in pairs],
        "class_j": [j for _, j in pairs], "a": rng.uniform(0.9, 1.0, len(pairs)),
    })  # fmt: skip
    fig = plot.pairwise_heatmap(table)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in fig.axes[0].texts]
    assert len(boxes) == 45
    overlaps = [(a, b) for k, a in enumerate(boxes) for b in boxes[k + 1 :] if a.overlaps(b)]
    assert overlaps == [], "cell labels overlap"


def test_pr_folds_draws_each_fold_and_the_pooled_curve(binary_log):
    from sklearn.metrics import precision_recall_curve

    folds, pooled = pr.pr_curve(binary_log).collect(), pr.pooled_pr_curve(binary_log).collect()
    fig = plot.pr_folds(folds, pooled)
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in visible] == sorted(folds["model"].unique().to_list())
    ax = visible[0]  # forest
    steps = [ln for ln in ax.lines if ln.get_drawstyle() == "steps-pre"]
    assert len(steps) == 11  # ten folds and the pooled curve
    dashed = next(ln for ln in steps if ln.get_linestyle() == "--")
    rows = binary_log.filter(pl.col("model") == "forest").collect()
    precision, recall, _ = precision_recall_curve(rows["label"] == "malignant", rows["score"])
    # scikit-learn's points, drawn from recall 0 (its closing point) upwards
    np.testing.assert_allclose(dashed.get_xdata(), recall[::-1], rtol=1e-12)
    np.testing.assert_allclose(dashed.get_ydata(), precision[::-1], rtol=1e-12)
    for line in steps:
        assert line.get_xdata()[0] == 0.0  # every curve starts at recall 0
    chance = next(ln for ln in ax.lines if ln.get_linestyle() == ":")
    assert chance.get_ydata()[0] == pytest.approx((rows["label"] == "malignant").mean())


def test_p_value_map_shows_not_significant_in_grey_and_p_near_alpha_on_its_side():
    table = pl.DataFrame({"model_a": ["a", "a", "b"], "model_b": ["b", "c", "c"],
                          "p_value": [0.0513, 0.0496, 0.3]})  # fmt: skip
    ax = plot.p_value_heatmap(table, alpha=0.05, title="ten").axes[0]
    legend = {t.get_text(): p for t, p in zip(ax.get_legend().get_texts(),
                                               ax.get_legend().get_patches(), strict=True)}  # fmt: skip
    red, green, blue, _ = legend["not significant"].get_facecolor()
    assert red == green == blue, "not significant is a neutral grey, not pink"
    texts = {t.get_text() for t in ax.texts}
    assert {"0.051", "0.0496"} <= texts  # never "0.05" on either side of alpha
    assert ax.get_title().startswith("ten: ")


def test_duncan_figure_names_its_data_set_and_keeps_few_ticks():
    table = pl.DataFrame({"model": ["x", "y", "z"], "mean": [0.99951, 0.99949, 0.97],
                          "rank": [1, 2, 3], "groups": ["a", "a", "b"]})  # fmt: skip
    fig = plot.duncan_groups(table, title="digits")
    assert fig._suptitle.get_text().startswith("digits: Duncan")
    fig.canvas.draw()
    means = fig.axes[0]
    ticks = [t for t in means.get_xticklabels() if t.get_text()]
    assert len(ticks) <= 5
    boxes = [t.get_window_extent() for t in ticks]
    assert not any(a.overlaps(b) for k, a in enumerate(boxes) for b in boxes[k + 1 :])
    labels = [t.get_text() for t in means.texts]
    assert len(set(labels)) == 3  # 0.9995 and 0.9995 would read alike: more digits


def test_one_vs_rest_past_six_classes_is_one_map_of_their_aucs():
    rng = np.random.default_rng(5)
    label = rng.integers(0, 10, 300)
    log = pl.concat([
        pl.DataFrame({"model": m, "fold": 0, "sample": np.arange(300), "class": c,
                      "score": rng.random(300) + (label == c) * s, "label": label})
        for m, s in (("a", 1.5), ("b", 0.5)) for c in range(10)
    ])  # fmt: skip
    curves = pr.pooled_roc(log).collect()
    fig = plot.roc_one_vs_rest(curves, order=["a", "b"])
    heat = fig.axes[0]
    assert [t.get_text() for t in heat.get_yticklabels()] == ["a", "b"]
    assert len(heat.texts) == 20
    # each cell is that class's one-vs-rest AUC (scikit-learn)
    from sklearn.metrics import roc_auc_score

    part = log.filter((pl.col("model") == "b") & (pl.col("class") == 7))
    expected = roc_auc_score(part["label"] == 7, part["score"])
    shown = heat.texts[10 + 7].get_text()
    assert float(shown) == pytest.approx(expected, abs=0.6 * 10 ** -len(shown.split(".")[1]))


def test_calibration_refuses_several_classes_curves():
    # a two-class log with both classes' rows gives a curve per class: drawn as one
    # model's folds they would double every count
    log = pl.scan_parquet(pr.demo_log_path())
    with pytest.raises(ValueError, match=r"classes \['benign', 'malignant'\]: filter one"):
        plot.calibration(pr.calibration_curve(log, n_bins=10))
