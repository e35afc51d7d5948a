"""Finding and scanning Parquet logs."""

from __future__ import annotations

import polars as pl
import pytest

from polaroc.io import LogFileError, demo_log_path, find_log_files, scan_logs

LOG = pl.DataFrame(
    {
        "model": ["a", "a", "b", "b"],
        "fold": [0, 1, 0, 1],
        "score": [0.1, 0.7, 0.4, 0.9],
        "label": [False, True, True, False],
    }
)


def test_files_globs_and_hive_folders_read_the_same_log(tmp_path):
    LOG.filter(pl.col("model") == "a").write_parquet(tmp_path / "a.parquet")
    LOG.filter(pl.col("model") == "b").write_parquet(tmp_path / "b.parquet")
    LOG.write_parquet(tmp_path / "hive", partition_by="model")
    expected = LOG.sort("model", "fold")
    by_files = scan_logs(tmp_path / "a.parquet", tmp_path / "b.parquet").collect()
    by_glob = scan_logs(str(tmp_path / "*.parquet")).collect()
    by_folder = scan_logs(tmp_path / "hive").collect().select(LOG.columns)
    for got in (by_files, by_glob, by_folder):
        assert got.sort("model", "fold").equals(expected)


def test_path_matching_nothing(tmp_path):
    with pytest.raises(LogFileError, match="no file matches"):
        find_log_files([str(tmp_path / "missing*.parquet")])


def test_folder_without_parquet(tmp_path):
    (tmp_path / "notes.txt").write_text("hi")
    with pytest.raises(LogFileError, match=r"holds no \.parquet files"):
        find_log_files([str(tmp_path)])


def test_empty_and_corrupt_files_are_named(tmp_path):
    empty = tmp_path / "empty.parquet"
    empty.write_bytes(b"")
    with pytest.raises(LogFileError, match=r"empty\.parquet' is empty"):
        scan_logs(empty)
    good = tmp_path / "good.parquet"
    LOG.write_parquet(good)
    truncated = tmp_path / "cut.parquet"
    truncated.write_bytes(good.read_bytes()[:-10])
    with pytest.raises(LogFileError, match=r"cut\.parquet' is not a Parquet file"):
        scan_logs(good, truncated)
    csv = tmp_path / "log.parquet"
    csv.write_text("model,fold\na,1\n")
    with pytest.raises(LogFileError, match="not a Parquet file"):
        scan_logs(csv)
    assert issubclass(LogFileError, ValueError)


def test_demo_log_is_bundled():
    log = scan_logs(demo_log_path()).collect()
    assert log.height > 0
    assert set(log.columns) == {"model", "fold", "sample", "class", "score", "label"}


def test_a_list_of_paths_reads_like_separate_arguments(tmp_path):
    LOG.filter(pl.col("model") == "a").write_parquet(tmp_path / "a.parquet")
    LOG.filter(pl.col("model") == "b").write_parquet(tmp_path / "b.parquet")
    paths = [tmp_path / "a.parquet", str(tmp_path / "b.parquet")]
    from_list = scan_logs(paths).collect().sort("model", "fold")
    assert from_list.equals(scan_logs(*paths).collect().sort("model", "fold"))
    assert from_list.equals(LOG.sort("model", "fold"))
    assert scan_logs((str(tmp_path / "a.parquet"),)).collect().height == 2
