"""``pr.distributed.evaluate`` on Ray and Spark, and its big-group plan, against ``pr.evaluate``.

Every comparison is column by column to 1e-12 against the one-machine table (itself
tested against brute force, scikit-learn and the papers). The big-group plan (per
distinct score counts cut into score ranges) runs on the ``"polars"`` engine —
partitions of one machine — for the large cases, and once per cluster engine.
The cluster sessions start once per module (``ray.init(num_cpus=2)``,
``local[2]``); these tests never skip.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from sklearn.metrics import roc_auc_score

import polaroc as pr
from polaroc.scale import distributed

TOL = 1e-12


def assert_same(got: pl.DataFrame, want: pl.DataFrame) -> None:
    """Same columns, dtypes, keys, nulls and NaNs; floats within ``TOL``."""
    assert got.columns == want.columns
    assert got.schema == want.schema
    assert got.height == want.height
    for name in want.columns:
        a, b = got[name], want[name]
        assert a.is_null().equals(b.is_null()), name
        if a.dtype.is_float():
            assert a.is_nan().fill_null(False).equals(b.is_nan().fill_null(False)), name
            finite = ~(a.is_nan() | a.is_null() | b.is_nan() | b.is_null())
            a_inf, b_inf = a.filter(finite), b.filter(finite)
            assert ((a_inf - b_inf).abs() <= TOL).all(), (name, (a_inf - b_inf).abs().max())
        else:
            assert a.equals(b), name


M_SE = ["auc_se_delong", "auc_ci_low", "auc_ci_high"]


def assert_same_but_m_se(got: pl.DataFrame, want: pl.DataFrame) -> None:
    """As :func:`assert_same`, but M's DeLong SE of the big groups is not computed (null).

    A big group's rows are counted by score range and never joined per sample, so the
    structural components of M (issue 36) are not formed there: a big group of several
    class blocks has a null ``auc_se_delong`` (and interval), which ``pr.evaluate`` gives;
    a big group of one class block has DeLong's, equal to ``pr.evaluate``'s.
    """
    assert_same(got.drop(M_SE), want.drop(M_SE))
    keys = [c for c in got.columns if c in ("dataset", "model", "repeat", "fold")]
    both = got.join(want, on=keys, suffix="_want")
    given = both.filter(pl.col("auc_se_delong").is_not_null())
    for name in M_SE:
        assert given[name].to_list() == pytest.approx(given[f"{name}_want"].to_list(), rel=1e-9)


def one_machine(log: pl.DataFrame, **kwargs: object) -> pl.DataFrame:
    table = pr.evaluate(log, **kwargs).collect()  # type: ignore[arg-type]  # test helper
    keys = [c for c in table.columns if c in log.columns]
    return table.sort(keys, nulls_last=True)


def binary_log(seed: int = 0, n: int = 3000) -> pl.DataFrame:
    """Two data sets × 3 models × 3 folds; rounded (tied) scores, −0.0, NaN, nulls, one class."""
    rng = np.random.default_rng(seed)
    score = np.round(rng.normal(size=n), 1)
    score[rng.random(n) < 0.05] = -0.0
    frame = pl.DataFrame(
        {
            "dataset": rng.choice(["d1", "d2"], n),
            "model": rng.choice(["a", "b", "c"], n),
            "fold": rng.integers(0, 3, n),
            "score": score,
            "label": rng.random(n) < 1 / (1 + np.exp(-score)),
        }
    )
    i = pl.int_range(pl.len())
    frame = frame.with_columns(
        pl.when(i % 211 == 0).then(None).otherwise(pl.col("score")).alias("score"),
        pl.when(i % 307 == 0).then(None).otherwise(pl.col("label")).alias("label"),
    )
    nan = pl.DataFrame(
        {"dataset": "d2", "model": "c", "fold": 2, "score": float("nan"), "label": True}
    )
    one_class = pl.DataFrame(
        {"dataset": "d1", "model": "z", "fold": [0] * 4, "score": [0.1, 0.3, 0.3, 0.0]}
    ).with_columns(label=pl.lit(True))
    return pl.concat([frame, nan, one_class], how="vertical_relaxed")


def multiclass_log(seed: int = 1, n: int = 800, k: int = 3) -> pl.DataFrame:
    """One row per (model, fold, sample, class); ties, a NaN, a null score, a one-class fold."""
    rng = np.random.default_rng(seed)
    samples = pl.DataFrame(
        {
            "dataset": rng.choice(["d1", "d2"], n),
            "model": rng.choice(["x", "y"], n),
            "fold": rng.integers(0, 2, n),
            "sample": np.arange(n),
            "label": rng.integers(0, k, n),
        }
    )
    log = samples.join(pl.DataFrame({"class": list(range(k))}), how="cross")
    shift = (log["class"] == log["label"]).to_numpy()
    log = log.with_columns(score=pl.Series(np.round(rng.normal(size=log.height) + shift, 1)))
    i = pl.int_range(pl.len())
    log = log.with_columns(
        pl.when(i == 7)
        .then(float("nan"))
        .when(i == 11)
        .then(None)
        .otherwise("score")
        .alias("score")
    )
    lone = pl.DataFrame(
        {"dataset": "d1", "model": "x", "fold": 9, "sample": [10_000, 10_001], "label": 0}
    ).join(pl.DataFrame({"class": list(range(k))}), how="cross")
    lone = lone.with_columns(score=pl.Series([0.5, 0.2, 0.1, 0.6, 0.3, 0.3]))
    return pl.concat([log, lone.select(log.columns)], how="vertical_relaxed")


def write_hive(log: pl.DataFrame, root: object, keys: list[str]) -> None:
    """``root/dataset=d1/fold=0/part.parquet``…: the keys only in the folder names."""
    for key, part in log.partition_by(keys, as_dict=True).items():
        folder = Path(str(root)).joinpath(*(f"{k}={v}" for k, v in zip(keys, key, strict=True)))
        folder.mkdir(parents=True)
        part.drop(keys).write_parquet(folder / "part.parquet")


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    root = tmp_path_factory.mktemp("distributed")
    binary, multi = binary_log(), multiclass_log()
    hive = root / "binary"
    write_hive(binary, hive, ["dataset", "fold"])
    flat = root / "multiclass.parquet"
    multi.write_parquet(flat)
    # the log as Polars reads it back (hive columns last), and its one-machine tables
    scanned = pr.scan_logs(hive).collect()
    assert scanned.columns[-2:] == ["dataset", "fold"]  # read from the folder names
    return {
        "hive": str(hive),
        "binary": scanned,
        "flat": str(flat),
        "multiclass": multi,
    }


@pytest.fixture(scope="module")
def ray_session() -> object:
    import ray
    import ray.data

    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False
        context.shuffle_strategy = ray.data.context.ShuffleStrategy.SORT_SHUFFLE_PULL_BASED
    yield ray
    if started:
        ray.shutdown()


@pytest.fixture(scope="module")
def spark_session() -> object:
    import os

    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    yield spark
    spark.stop()


@pytest.fixture(params=["ray", "spark"])
def engine(request: pytest.FixtureRequest) -> str:
    request.getfixturevalue(f"{request.param}_session")
    return str(request.param)


# ----------------------------------------------------------------- on the engines


def test_hive_folders_of_whole_groups(engine: str, logs: dict[str, object]) -> None:
    """dataset=/fold= folders hold whole groups: read per folder (no shuffle), fold stays Int64."""
    got = distributed.evaluate(logs["hive"], engine=engine)
    want = one_machine(logs["binary"])
    assert got.schema["fold"] == pl.Int64
    assert_same(got, want)


def test_shuffled_multiclass(engine: str, logs: dict[str, object]) -> None:
    """A flat multiclass log: the engine's group-by gathers each group; M, error per sample."""
    got = distributed.evaluate(logs["flat"], engine=engine)
    assert_same(got, one_machine(logs["multiclass"]))


def test_options_and_renamed_columns_on_engine(engine: str, tmp_path: object) -> None:
    """weight, threshold, collapse_ties and renamed columns reach the workers (issue 21)."""
    names = {"model": "clf", "fold": "cv", "score": "prob", "label": "y"}
    log = (
        binary_log(seed=5, n=600)
        .drop("dataset")
        .with_columns((pl.int_range(pl.len()) % 4 * 0.5).alias("w"))
    )
    log = log.rename(names)
    path = Path(str(tmp_path)) / "renamed.parquet"
    log.write_parquet(path)
    options = {**names, "weight": "w", "threshold": 0.2, "collapse_ties": True}
    got = distributed.evaluate(str(path), engine=engine, **options)  # type: ignore[arg-type]
    want = one_machine(log, **options)
    assert "n_null_weight" in got.columns
    assert_same(got, want)


def test_big_groups_on_engine(engine: str, logs: dict[str, object]) -> None:
    """Groups above max_group_rows from score counts; the hive keys (strings on Ray) cast back."""
    log = logs["binary"]
    got = distributed.evaluate(logs["hive"], engine=engine, by=["dataset"], max_group_rows=700)
    assert_same(got, one_machine(log, by=["dataset"]))


def test_big_group_scoring_rules_on_ray(ray_session: object, tmp_path: object) -> None:
    """brier, log_loss and n_not_probability of big groups from Ray's shuffled score counts."""
    log = probability_log(n=1200).with_columns(
        pl.when((pl.col("model") == "c") & (pl.int_range(pl.len()) % 50 == 0))
        .then(1.5)
        .otherwise("score")
        .alias("score")
    )
    got = distributed.evaluate(log_path(tmp_path, log), engine="ray", max_group_rows=100)
    assert_same(got, one_machine(log))
    assert got.filter(model="a")["brier"].is_not_null().all()
    assert got.filter(model="c")["n_not_probability"].sum() > 0


def test_engine_dataset_and_custom_table(engine: str, logs: dict[str, object]) -> None:
    """The engine's own data as source, and any per-group table function."""
    log: pl.DataFrame = logs["multiclass"]  # type: ignore[assignment]
    data: object
    if engine == "ray":
        import ray.data

        data = ray.data.from_arrow(log.to_arrow())
    else:
        from pyspark.sql import SparkSession

        session = SparkSession.getActiveSession()
        assert session is not None
        data = session.createDataFrame(log.to_arrow())

    def per_group(lf: pl.LazyFrame) -> pl.LazyFrame:
        return pr.pairwise_auc(lf, by=["model"])

    got = distributed.evaluate(data, engine=engine, table=per_group, by="model")
    want = pr.pairwise_auc(log, by=["model"]).collect()
    assert_same(got.sort("model", "class_i", "class_j"), want.sort("model", "class_i", "class_j"))


# --------------------------------------------------- the big-group plan, on Polars


def big_group(n: int, seed: int = 2) -> pl.DataFrame:
    """One (model, fold) group of n rows: scores on a grid (ties everywhere), −0.0 beside 0.0."""
    rng = np.random.default_rng(seed)
    score = np.round(rng.normal(size=n), 3)
    score[rng.random(n) < 0.01] = -0.0
    score[rng.random(n) < 0.01] = 0.0
    label = rng.random(n) < 1 / (1 + np.exp(-2 * score))
    return pl.DataFrame({"model": "m", "fold": 0, "score": score, "label": label})


def test_a_group_of_millions_in_score_ranges(tmp_path: object) -> None:
    """2M rows, max_group_rows 250,000: 8 ranges; tied rows in every input partition."""
    log = big_group(2_000_000)
    got = distributed.evaluate(log_path(tmp_path, log), engine="polars", max_group_rows=250_000)
    assert_same(got, one_machine(log))
    want = log.select(
        pr.auc("score", "label"), pr.sauc("score", "label"), pr.auc_se("score", "label")
    )
    assert abs(got["auc"].item() - want["auc"].item()) <= TOL
    assert abs(got["sauc"].item() - want["sauc"].item()) <= TOL
    sklearn = roc_auc_score(log["label"].to_numpy(), log["score"].to_numpy())
    assert abs(got["auc"].item() - sklearn) <= 1e-9


def log_path(tmp_path: object, log: pl.DataFrame, name: str = "log.parquet") -> str:
    path = f"{tmp_path}/{name}"
    log.write_parquet(path)
    return path


def test_zero_signs_are_one_score(tmp_path: object) -> None:
    """Positives at −0.0 and negatives at 0.0 tie (½ each), in any range."""
    log = pl.DataFrame(
        {
            "model": "m",
            "fold": 0,
            "score": [-0.0] * 50 + [0.0] * 50 + [1.0] * 20 + [-1.0] * 20,
            "label": [True] * 50 + [False] * 50 + [True] * 20 + [False] * 20,
        }
    )
    got = distributed.evaluate(log_path(tmp_path, log), engine="polars", max_group_rows=30)
    assert got["auc"].item() == pytest.approx(roc_auc_score(log["label"], log["score"]), abs=TOL)
    assert_same(got, one_machine(log))


def test_counts_past_32_bits(tmp_path: object) -> None:
    """n_pos · n_neg = 100,000² > 2³²: a UInt32 product would wrap; 2U stays an exact integer."""
    n = 100_000
    rng = np.random.default_rng(3)
    log = pl.DataFrame(
        {
            "model": "m",
            "fold": 0,
            "score": np.concatenate([rng.integers(0, 50, n), rng.integers(10, 60, n)]) / 10,
            "label": [False] * n + [True] * n,
        }
    )
    got = distributed.evaluate(log_path(tmp_path, log), engine="polars", max_group_rows=10)
    sklearn = roc_auc_score(log["label"].to_numpy(), log["score"].to_numpy())
    assert got["auc"].item() == pytest.approx(sklearn, abs=TOL)
    assert_same(got, one_machine(log))


def test_big_multiclass_groups_with_samples(tmp_path: object) -> None:
    """M, sAUC and the per-sample error of big multiclass groups, small groups beside them."""
    log = multiclass_log(n=20_000)
    path = log_path(tmp_path, log)
    got = distributed.evaluate(path, engine="polars", max_group_rows=5000, partitions=7)
    assert_same_but_m_se(got, one_machine(log))


def test_nan_and_one_class_big_groups(tmp_path: object) -> None:
    """A NaN makes a big group's metrics NaN; a one-class big group's are null."""
    log = binary_log(n=4000)
    path = log_path(tmp_path, log)
    got = distributed.evaluate(path, engine="polars", max_group_rows=60)
    assert_same(got, one_machine(log))
    assert got.filter(model="c", fold=2, dataset="d2")["auc"].is_nan().all()
    assert got.filter(model="z")["auc"].is_null().all()


# ------------------------------------- brier, log_loss, n_not_probability of big groups


def probability_log(seed: int = 4, n: int = 3000) -> pl.DataFrame:
    """Binary log without a class column: probabilities on a 0.01 grid (ties, exact 0 and 1)."""
    rng = np.random.default_rng(seed)
    p = np.round(rng.random(n), 2)
    return pl.DataFrame(
        {
            "model": rng.choice(["a", "b", "c"], n),
            "fold": rng.integers(0, 2, n),
            "score": p,
            "label": rng.random(n) < p,
        }
    )


def brute_scores(rows: pl.DataFrame, score: str = "score", label: str = "label") -> list[float]:
    """Brier and scikit-learn's clipped log loss, row by row in numpy (the oracle)."""
    s, y = rows[score].to_numpy(), rows[label].to_numpy().astype(float)
    eps = np.finfo(np.float64).eps
    given = np.clip(np.where(y == 1, s, 1 - s), eps, 1 - eps)
    return [float(np.mean((s - y) ** 2)), float(np.mean(-np.log(given)))]


def test_scoring_rules_of_big_groups_without_class_column(tmp_path: object) -> None:
    """One row per sample: means over the rows; 1.5 and −0.2 null a group and are counted."""
    log = probability_log()
    i = pl.int_range(pl.len())
    odd = pl.col("model") == "c"
    log = log.with_columns(
        pl.when(odd & (pl.col("fold") == 0) & (i % 97 == 0))
        .then(1.5)
        .when(odd & (pl.col("fold") == 1) & (i % 89 == 0))
        .then(-0.2)
        .when(i == 5)
        .then(None)
        .otherwise("score")
        .alias("score")
    )
    nan = pl.DataFrame({"model": "b", "fold": 1, "score": float("nan"), "label": True})
    small = pl.DataFrame({"model": "s", "fold": 0, "score": [0.2, 0.9, 0.4], "label": [0, 1, 1]})
    log = pl.concat([log, nan, small.cast({"label": pl.Boolean})], how="vertical_relaxed")
    got = distributed.evaluate(log_path(tmp_path, log), engine="polars", max_group_rows=100)
    assert_same(got, one_machine(log))
    clean = got.filter(model="a", fold=0)
    want = brute_scores(log.filter(model="a", fold=0).drop_nulls())
    assert clean["brier"].item() == pytest.approx(want[0], abs=TOL)
    assert clean["log_loss"].item() == pytest.approx(want[1], abs=TOL)
    bad = got.filter(model="c")
    assert bad["brier"].is_null().all()
    assert bad["log_loss"].is_null().all()
    outside = log.filter(model="c").filter((pl.col("score") < 0) | (pl.col("score") > 1))
    assert bad["n_not_probability"].sum() == outside.height > 0
    assert got.filter(model="b", fold=1)["brier"].is_nan().all()


def test_scoring_rules_of_big_binary_class_logs(tmp_path: object) -> None:
    """Both classes' rows: the larger class value's rows are the positive class's; one-class too."""
    base = probability_log(seed=6).with_columns(pl.col("label").cast(pl.Int64))
    sample = pl.int_range(pl.len()).alias("sample")
    pos = base.with_columns(sample, pl.lit(1).alias("class"))
    neg = pos.with_columns(
        (1.0 - pl.col("score")).round(2).alias("score"), pl.lit(0).alias("class")
    )
    log = pl.concat([pos, neg]).filter((pl.col("model") != "c") | (pl.col("class") == 1))
    path = log_path(tmp_path, log)
    got = distributed.evaluate(path, engine="polars", max_group_rows=150, partitions=3)
    assert_same_but_m_se(got, one_machine(log))
    for model in ("a", "c"):  # c holds only class 1's rows
        rows = pos.filter(model=model, fold=1)
        want = brute_scores(rows.with_columns(pl.col("label") == 1))
        row = got.filter(model=model, fold=1)
        assert row["brier"].item() == pytest.approx(want[0], abs=TOL)
        assert row["log_loss"].item() == pytest.approx(want[1], abs=TOL)


def test_scoring_rules_of_big_multiclass_groups(tmp_path: object) -> None:
    """Brier summed over classes and the true class's clipped log loss, per sample."""
    rng = np.random.default_rng(8)
    n, k = 1500, 3
    logits = rng.normal(size=(n, k)) * 2
    proba = np.round(np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True), 3)
    proba[:5] = [1.0, 0.0, 0.0]  # a zero for the true class of some: clipped
    label = np.array([(rng.random() < proba[i].cumsum()).argmax() for i in range(n)])
    label[:5] = 1
    model = rng.choice(["x", "y"], n)
    log = pl.DataFrame(
        {
            "model": np.repeat(model, k),
            "fold": 0,
            "sample": np.repeat(np.arange(n), k),
            "class": np.tile(np.arange(k), n),
            "score": proba.ravel(),
            "label": np.repeat(label, k),
        }
    )
    log = log.with_columns(
        pl.when((pl.col("model") == "y") & (pl.col("sample") == 17) & (pl.col("class") == 2))
        .then(1.25)
        .otherwise("score")
        .alias("score")
    )
    got = distributed.evaluate(log_path(tmp_path, log), engine="polars", max_group_rows=400)
    assert_same_but_m_se(got, one_machine(log))
    x = model == "x"
    onehot = np.eye(k)[label[x]]
    brier = float(np.mean(((proba[x] - onehot) ** 2).sum(axis=1)))
    eps = np.finfo(np.float64).eps
    loss = float(np.mean(-np.log(np.clip(proba[x][np.arange(x.sum()), label[x]], eps, 1 - eps))))
    assert got.filter(model="x")["brier"].item() == pytest.approx(brier, abs=TOL)
    assert got.filter(model="x")["log_loss"].item() == pytest.approx(loss, abs=TOL)
    y = got.filter(model="y")
    assert y["brier"].is_null().item()
    assert y["n_not_probability"].item() == 1


# ------------------------------------------------------------------------ errors


def test_engine_not_installed(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    path = log_path(tmp_path, binary_log(n=50))
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ImportError, match=r"pip install 'polaroc\[ray\]'"):
        distributed.evaluate(path, engine="ray")
    monkeypatch.setitem(sys.modules, "pyspark.sql", None)
    with pytest.raises(ImportError, match=r"pip install 'polaroc\[spark\]'"):
        distributed.evaluate(path, engine="spark")


def test_the_one_machine_errors(tmp_path: object) -> None:
    """No engine starts for a path that matches nothing or a log without a column."""
    with pytest.raises(ValueError, match="no file matches") as caught:
        distributed.evaluate(f"{tmp_path}/nothing-*.parquet", engine="spark")
    with pytest.raises(ValueError, match="no file matches") as local:
        pr.scan_logs(f"{tmp_path}/nothing-*.parquet")
    assert str(caught.value) == str(local.value)
    path = log_path(tmp_path, binary_log(n=50).drop("label"))
    with pytest.raises(ValueError, match="label") as caught:
        distributed.evaluate(path, engine="ray")
    with pytest.raises(ValueError, match="label") as local:
        pr.evaluate(pl.scan_parquet(path))
    assert str(caught.value) == str(local.value)
    with pytest.raises(ValueError, match="engine must be"):
        distributed.evaluate(path, engine="dask")


def test_max_group_rows_needs_the_default_table(tmp_path: object) -> None:
    path = log_path(tmp_path, binary_log(n=50))
    with pytest.raises(ValueError, match="max_group_rows"):
        distributed.evaluate(path, engine="polars", table=pr.evaluate, max_group_rows=10)
    with pytest.raises(ValueError, match="positive"):
        distributed.evaluate(path, engine="polars", max_group_rows=0)


def test_reachable_as_pr_distributed() -> None:
    assert pr.distributed.evaluate is distributed.evaluate


def test_pair_counts_past_64_bits_raise() -> None:
    """A group whose 2·n₊·n₋ could pass 2⁶³ raises instead of wrapping (the totals table)."""
    from polaroc.core.blocks import CLASS, LABEL
    from polaroc.scale import _big_groups as big

    totals = pl.DataFrame(
        {big.GID: [0, 0], CLASS: [True, True], LABEL: [True, False], big.W: [3 * 10**9] * 2}
    )
    with pytest.raises(ValueError, match="64-bit"):
        big.check_range(totals)
    big.check_range(totals.with_columns(pl.lit(2 * 10**9).alias(big.W)))  # 4e18: still exact


# ------------------------------------------------------------- the command line


def test_report_engine_gives_the_local_per_fold_table(
    spark_session: object, tmp_path: Path
) -> None:
    # `polaroc report --engine spark` computes the per-fold table on the engine; the
    # tables written must equal the one-machine report's
    from polaroc.report.cli import main

    log = pl.read_parquet(pr.demo_log_path())
    folder = tmp_path / "log"
    log.write_parquet(folder, partition_by="model")
    local, remote = tmp_path / "local", tmp_path / "spark"
    assert main(["report", str(folder), "-o", str(local), "--no-plots", "-q"]) == 0
    args = ["report", str(folder), "-o", str(remote), "--no-plots", "-q", "--engine", "spark"]
    assert main(args) == 0
    for name in ("folds", "paired_ttest", "anova"):
        keys = ["model", "fold"] if name == "folds" else None
        a = pl.read_parquet(local / f"{name}.parquet")
        b = pl.read_parquet(remote / f"{name}.parquet")
        if keys:
            a, b = a.sort(keys), b.sort(keys)
        assert_frame_equal(a, b, check_exact=False, rel_tol=1e-12, abs_tol=1e-12)
