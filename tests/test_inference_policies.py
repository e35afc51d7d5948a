"""The contract's policies for awkward input, on this round's inference code.

DESIGN.md, "Policies for awkward input", "Inference no peer has" and "The log": a NaN
score makes a group's estimate and SE NaN (never a finite number, p = 0 or a decision);
a degenerate group is null even holding a NaN; a cluster id is one per sample; pooled
groups keep the samples of different folds apart; the same log in any row order gives
the same bits. Oracles: ``tests.oracles`` (``hand_till_m``, ``hand_till_m_variance``,
``obuchowski_variance``, written from the papers) and, for invariances, the function
itself on the reordered or renamed log.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polaroc as pr
from tests.oracles import hand_till_m, hand_till_m_variance, obuchowski_variance

ROOT = Path(__file__).resolve().parents[1]
NAN = float("nan")


def binary(rng: np.random.Generator, n: int = 12, *, one_class: bool = False) -> pl.DataFrame:
    """Two models scoring the same ``n`` samples (half positive, or all with ``one_class``)."""
    y = np.arange(n) % 2 == 0
    if one_class:
        y[:] = True
    parts = [
        pl.DataFrame({"model": m, "fold": 0, "sample": np.arange(n), "patient": np.arange(n) // 2,
                      "score": rng.normal(size=n) + y, "label": y})
        for m in ("a", "b")
    ]  # fmt: skip
    return pl.concat(parts)


def multiclass(
    rng: np.random.Generator,
    n: int = 15,
    *,
    models: str = "ab",
    folds: int = 1,
    labels: list[int] | None = None,
    decimals: int = 1,
) -> pl.DataFrame:
    """Three classes' scores per sample (rounded: ties), models scoring the same samples."""
    parts = []
    for f in range(folds):
        lab = np.arange(n) % 3 if labels is None else np.asarray(labels)
        patient = rng.integers(0, max(2, n // 3), n)
        for m in models:
            s = np.round(
                rng.random((n, 3)) + 0.5 * (np.arange(3)[None, :] == lab[:, None]), decimals
            )
            parts.append(
                pl.DataFrame({"model": m, "fold": f, "sample": np.repeat(np.arange(n), 3),
                              "class": np.tile(np.arange(3), n), "score": s.ravel(),
                              "label": np.repeat(lab, 3), "patient": np.repeat(patient, 3)})
            )  # fmt: skip
    return pl.concat(parts)


def with_nan(log: pl.DataFrame, model: str = "a") -> pl.DataFrame:
    """``log`` with the first row of ``model`` scored NaN."""
    first = pl.int_range(pl.len()).over("model") == 0
    at = first & (pl.col("model") == model)
    return log.with_columns(score=pl.when(at).then(NAN).otherwise(pl.col("score")))


def is_nan(value: object) -> bool:
    return isinstance(value, float) and math.isnan(value)


def of_model(log: pl.DataFrame, model: str) -> tuple[list, ...]:
    rows = log.filter(pl.col("model") == model)
    return tuple(rows[c].to_list() for c in ("sample", "class", "label", "score"))


# ------------------------------------------------------------- 1. NaN and degenerate


TWO_CURVE: dict[str, Callable[[pl.DataFrame | pl.LazyFrame], pl.LazyFrame]] = {
    "delong": lambda f: pr.delong_test(f, "a", "b"),
    "delong_unpaired": lambda f: pr.delong_test(f, "a", "b", paired=False),
    "delong_clustered": lambda f: pr.delong_test(f, "a", "b", cluster="patient"),
    "bootstrap_test": lambda f: pr.bootstrap_test(f, "a", "b", n_boot=20, seed=1),
    "bootstrap_test_clustered": lambda f: pr.bootstrap_test(
        f, "a", "b", n_boot=20, seed=1, cluster="patient"
    ),
    "venkatraman": lambda f: pr.venkatraman_test(f, "a", "b", n_perm=20, seed=1),
    "venkatraman_unpaired": lambda f: pr.venkatraman_test(
        f, "a", "b", n_perm=20, seed=1, paired=False
    ),
}


@pytest.mark.parametrize("name", sorted(TWO_CURVE))
def test_a_one_class_group_holding_a_nan_is_null(run, rng, name):
    """Degenerate precedes NaN: no estimate, statistic, p-value or decision at all."""
    test = TWO_CURVE[name]
    row = run(with_nan(binary(rng, one_class=True)), test).row(0, named=True)
    for column in ("estimate", "statistic", "p_value", "reject", "auc_a", "auc_b"):
        assert row[column] is None, column
    row = run(with_nan(binary(rng)), test).row(0, named=True)  # two classes: NaN
    for column in ("estimate", "statistic", "p_value"):
        assert is_nan(row[column]), column
    assert row["reject"] is None


def test_delong_omnibus_one_class_with_nan_is_null(run, rng):
    one = run(with_nan(binary(rng, one_class=True)), pr.delong_omnibus).row(0, named=True)
    assert (one["statistic"], one["p_value"]) == (None, None)
    two = run(with_nan(binary(rng)), pr.delong_omnibus).row(0, named=True)
    assert is_nan(two["statistic"])
    assert is_nan(two["p_value"])


def test_a_nan_score_makes_m_and_its_se_nan(run, rng):
    """evaluate's auc_se_delong and the tests of M: NaN, never a finite SE of a NaN M."""
    log = with_nan(multiclass(rng, models="ab"))
    table = run(log, pr.evaluate).sort("model")
    assert is_nan(table["auc"][0])
    assert is_nan(table["auc_se_delong"][0])
    _, var = hand_till_m_variance(*of_model(log, "b"))  # the clean model: the oracle
    assert table["auc_se_delong"][1] == pytest.approx(math.sqrt(var), rel=1e-9)
    for paired in (True, False):
        row = run(log, lambda f, p=paired: pr.delong_test(f, "a", "b", paired=p)).row(0, named=True)
        for column in ("estimate", "statistic", "p_value", "var_a", "var_b", "ci_low"):
            assert is_nan(row[column]), (paired, column)
        assert row["reject"] is None
    omnibus = run(with_nan(multiclass(rng, models="abc")), pr.delong_omnibus).row(0, named=True)
    assert is_nan(omnibus["statistic"])
    assert is_nan(omnibus["p_value"])


def test_one_label_with_nan_and_one_sample_per_label_are_null(run, rng):
    one_label = with_nan(multiclass(rng, labels=[0] * 15))
    row = run(one_label, lambda f: pr.delong_test(f, "a", "b")).row(0, named=True)
    assert (row["estimate"], row["statistic"], row["reject"]) == (None, None, None)
    assert run(one_label, pr.evaluate)["auc_se_delong"].to_list() == [None, None]
    single = multiclass(rng, n=3)  # one sample per label: M defined, no variance
    row = run(single, lambda f: pr.delong_test(f, "a", "b")).row(0, named=True)
    assert (row["var_a"], row["statistic"], row["p_value"], row["reject"]) == (None,) * 4
    assert row["auc_a"] == pytest.approx(hand_till_m(*of_model(single, "a")[1:]), abs=1e-12)


# --------------------------------------------------------------- 2. unpaired M


def test_unpaired_m_test_takes_independent_samples(run, rng):
    """Two test sets of different sizes (ids overlapping): each M and Var(M) its own."""
    log = pl.concat([multiclass(rng, n=15, models="a"), multiclass(rng, n=9, models="b")])
    row = run(log, lambda f: pr.delong_test(f, "a", "b", paired=False)).row(0, named=True)
    (m_a, v_a), (m_b, v_b) = (hand_till_m_variance(*of_model(log, m)) for m in "ab")
    assert [row["auc_a"], row["auc_b"]] == pytest.approx([m_a, m_b], abs=1e-12)
    assert [row["var_a"], row["var_b"]] == pytest.approx([v_a, v_b], rel=1e-9)
    assert row["n"] == 24
    welch = (v_a + v_b) ** 2 / (v_a**2 / 14 + v_b**2 / 8)  # N − 1 samples per model
    assert row["df"] == pytest.approx(welch, rel=1e-9)
    assert row["statistic"] == pytest.approx((m_a - m_b) / math.sqrt(v_a + v_b), rel=1e-9)


def test_m_test_without_a_sample_column_raises(rng):
    log = multiclass(rng).drop("sample")
    with pytest.raises(ValueError, match="needs the 'sample' column"):
        pr.delong_test(log, "a", "b", paired=False)


# ------------------------------------------------------------- 3. the log contract


def test_pooled_bootstrap_keeps_the_samples_of_different_folds_apart(run, rng):
    """Sample ids restart in every fold: by=() equals the same log with unique ids."""
    parts = []
    for f in range(3):
        y = rng.permutation(np.arange(10) % 2 == 0)
        parts.append(pl.DataFrame({"model": "a", "fold": f, "sample": np.arange(10),
                                   "score": rng.normal(size=10) + y, "label": y}))  # fmt: skip
    log = pl.concat(parts).with_columns(patient=pl.col("fold") * 100 + pl.col("sample"))
    unique = log.with_columns(sample=pl.col("patient"))
    boot: Callable[..., Callable[[pl.DataFrame | pl.LazyFrame], pl.LazyFrame]]

    def boot(**kw):
        return lambda f: pr.bootstrap(f, by=(), n_boot=100, seed=3, **kw)

    expected = run(unique, boot())
    assert_frame_equal(run(log, boot()), expected)
    assert_frame_equal(run(log, boot(cluster="patient")), expected)  # singleton clusters


# --------------------------------------------------------------- 4. cluster semantics


def both_classes(rng: np.random.Generator) -> pl.DataFrame:
    """Two models, both classes' rows of each sample (complementary scores), 3 per patient."""
    log = binary(rng, n=18).with_columns(
        patient=pl.col("sample") // 3, label=pl.col("label").cast(pl.Int64)
    )
    return pl.concat([
        log.with_columns(**{"class": pl.lit(1, pl.Int64)}),
        log.with_columns(**{"class": pl.lit(0, pl.Int64)}, score=1.0 - pl.col("score")),
    ])  # fmt: skip


def test_a_cluster_id_is_one_per_sample_in_every_class_row(rng):
    log = both_classes(rng)
    moved = log.with_columns(
        patient=pl.when((pl.col("class") == 0) & (pl.col("sample") == 4))
        .then(99)
        .otherwise("patient")
    )
    message = r"'patient'.*\(fold, sample\) in more than one cluster: \(0, 4\)"
    with pytest.raises(ValueError, match=message):
        pr.delong_test(moved, "a", "b", cluster="patient")
    with pytest.raises(pl.exceptions.ComputeError, match=message):
        pr.delong_test(moved.lazy(), "a", "b", cluster="patient").collect()
    renamed = moved.rename({"patient": "subject", "sample": "id", "class": "k"})
    with pytest.raises(ValueError, match=r"'subject'.*\(fold, id\) in more than one cluster"):
        pr.delong_test(renamed, "a", "b", cluster="subject", sample="id", class_="k")


def test_unpaired_models_keep_their_own_clusters(rng):
    """Unpaired, a sample id names a sample of one model: its cluster may differ in the other."""
    log = binary(rng, n=20).with_columns(patient=pl.col("sample") // 4)
    log = log.with_columns(
        patient=pl.when(pl.col("model") == "b")
        .then((pl.col("sample") + 1) // 3)
        .otherwise("patient")
    )
    row = (
        pr.delong_test(log, "a", "b", paired=False, cluster="patient").collect().row(0, named=True)
    )
    for side, model in (("a", "a"), ("b", "b")):
        rows = log.filter(pl.col("model") == model)
        _, var = obuchowski_variance(rows["score"], rows["label"], rows["patient"])
        assert row[f"var_{side}"] == pytest.approx(var, rel=1e-9)


# ------------------------------------------------------------------ 5. determinism


def the_tables(log: pl.LazyFrame) -> dict[str, pl.LazyFrame]:
    binary_rows = log.filter(pl.col("class") == 1).with_columns(label=pl.col("label") == 1)
    binary_rows = binary_rows.drop("class")
    return {
        "evaluate": pr.evaluate(log).sort("model", "fold"),
        "delong_m": pr.delong_test(log, "a", "b"),
        "delong_m_clustered": pr.delong_test(log, "a", "b", cluster="patient", by=()),
        "delong_m_unpaired": pr.delong_test(log, "a", "b", paired=False),
        "omnibus_m": pr.delong_omnibus(log),
        "bootstrap_clustered": pr.bootstrap(log, n_boot=20, seed=1, cluster="patient"),
        "delong_clustered": pr.delong_test(binary_rows, "a", "b", cluster="patient"),
        "auc_se_clustered": binary_rows.group_by("model", "fold")
        .agg(pr.auc_se("score", "label", cluster="patient"))
        .sort("model", "fold"),
    }


def digests(path: str, seeds: int = 3) -> dict[str, list[str]]:
    """Every table's CSV digest on the log's rows shuffled ``seeds`` ways, per engine."""
    log = pl.read_parquet(path)
    out: dict[str, set[str]] = {}
    for seed in range(seeds):
        shuffled = log.sample(fraction=1.0, shuffle=True, seed=seed).lazy()
        for engine in ("in-memory", "streaming"):
            for name, table in the_tables(shuffled).items():
                buffer = io.BytesIO()
                table.collect(engine=engine).write_csv(buffer)
                out.setdefault(name, set()).add(hashlib.sha256(buffer.getvalue()).hexdigest())
    return {name: sorted(found) for name, found in out.items()}


@pytest.fixture(scope="module")
def tied_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two folds × three models × 300 samples of three classes, scores with many ties."""
    rng = np.random.default_rng(5)
    log = multiclass(rng, n=300, models="abc", folds=2, decimals=2)
    path = tmp_path_factory.mktemp("policies") / "log.parquet"
    log.write_parquet(path)
    return path


def test_the_same_bits_in_any_row_order_and_thread_count(tied_log):
    """M, its SE, the tests of M and the clustered variances: one digest per table."""
    found = digests(str(tied_log))
    assert {name: len(seen) for name, seen in found.items()} == dict.fromkeys(found, 1)
    code = "import json, sys; from tests.test_inference_policies import digests; "
    code += "print(json.dumps(digests(sys.argv[1], seeds=1)))"
    path_ = os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), str(ROOT)) if p)
    env = {**os.environ, "POLARS_MAX_THREADS": "1", "PYTHONPATH": path_}
    done = subprocess.run(
        [sys.executable, "-c", code, str(tied_log)], capture_output=True, text=True, env=env,
        cwd=ROOT, check=True, timeout=600,
    )  # fmt: skip
    assert json.loads(done.stdout.strip().splitlines()[-1]) == found


# ------------------------------------------------------------------------ 6. shape


def test_the_tests_of_m_share_the_comparison_shape(rng):
    log = multiclass(rng)
    tables = [
        pr.delong_test(log, "a", "b").collect(),
        pr.delong_test(log, "a", "b", paired=False).collect(),
        pr.delong_test(log, "a", "b", positive_class=1).collect(),
        pr.delong_omnibus(log).collect(),
    ]
    for table in tables:
        schema = table.schema
        assert schema["n"] == pl.Int64
        assert all(schema[c] == pl.Float64 for c in ("statistic", "p_value") if c in schema)
        assert schema.get("df", pl.Float64) == pl.Float64
        assert schema.get("reject", pl.Boolean) == pl.Boolean
    assert pl.concat(tables, how="diagonal").height == 4
