"""Finding and scanning Parquet score logs: files, globs and hive-partitioned folders."""

from __future__ import annotations

import glob
from collections.abc import Iterable, Sequence
from pathlib import Path

import polars as pl

__all__ = ["demo_log_path", "find_log_files", "scan_logs"]

_MAGIC = b"PAR1"


class LogFileError(ValueError):
    """A path names no readable Parquet log; the message says which and why."""


def demo_log_path() -> Path:
    """Path of the bundled example log (see ``scripts/make_demo_log.py``).

    Six classifiers on the Wisconsin diagnostic breast cancer data, stratified
    10-fold cross-validation, one row per (model, fold, sample, class).

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> pl.read_parquet(pr.demo_log_path()).group_by("model").len().sort("model")
    shape: (6, 2)
    ┌─────────────┬──────┐
    │ model       ┆ len  │
    │ ---         ┆ ---  │
    │ str         ┆ u32  │
    ╞═════════════╪══════╡
    │ forest      ┆ 1138 │
    │ knn9        ┆ 1138 │
    │ lda         ┆ 1138 │
    │ logistic    ┆ 1138 │
    │ naive_bayes ┆ 1138 │
    │ tree        ┆ 1138 │
    └─────────────┴──────┘
    """
    return Path(__file__).resolve().parent / "data" / "demo_log.parquet"


def _expand(path: str) -> list[Path]:
    p = Path(path)
    if p.is_dir():
        files = sorted(f for f in p.rglob("*.parquet") if f.is_file())
        if not files:
            msg = f"folder {path!r} holds no .parquet files"
            raise LogFileError(msg)
        return files
    if p.is_file():
        return [p]
    matches = sorted(Path(m) for m in glob.glob(path, recursive=True) if Path(m).is_file())
    if not matches:
        msg = f"no file matches {path!r}; give Parquet files, globs (quote them) or folders"
        raise LogFileError(msg)
    return matches


def _check_parquet(path: Path) -> None:
    """Raise ``LogFileError`` unless ``path`` looks like a complete Parquet file."""
    size = path.stat().st_size
    if size == 0:
        msg = f"{str(path)!r} is empty (0 bytes); re-write the log or leave it out"
        raise LogFileError(msg)
    with path.open("rb") as f:
        head = f.read(4)
        f.seek(max(size - 4, 0))
        tail = f.read(4)
    if head != _MAGIC or tail != _MAGIC or size < 12:
        msg = f"{str(path)!r} is not a Parquet file (truncated or another format)"
        raise LogFileError(msg)


def find_log_files(paths: Iterable[str]) -> list[Path]:
    """Expand files, globs and folders into the list of Parquet files they name.

    Raises
    ------
    LogFileError
        (a ``ValueError``) for a path that matches nothing, a folder without Parquet
        files, or a file that is empty or not Parquet.
    """
    files: list[Path] = []
    for path in paths:
        files.extend(_expand(str(path)))
    if not files:
        msg = "no log given; pass Parquet files, globs or folders"
        raise LogFileError(msg)
    for f in dict.fromkeys(files):
        _check_parquet(f)
    return list(dict.fromkeys(files))


def scan_logs(
    *paths: str | Path | Sequence[str | Path], hive_partitioning: bool | None = None
) -> pl.LazyFrame:
    """Lazily scan Parquet score logs given as files, globs or hive-partitioned folders.

    Every file is checked to be a complete Parquet file first (empty or truncated files
    raise a ``ValueError`` naming them). Hive partition columns (``model=knn/...``)
    become columns of the log, so a folder partitioned by model or data set reads as
    one log.

    Parameters
    ----------
    *paths
        Files, glob patterns or folders, or lists of them (as ``pl.scan_parquet``
        accepts).
    hive_partitioning
        Read ``key=value`` folder names as columns; ``None`` (default) guesses it
        from the paths, as ``pl.scan_parquet`` does.

    Returns
    -------
    pl.LazyFrame
        One lazy scan over all files (nothing is read but the footers).

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> log = pr.scan_logs(pr.demo_log_path())
    >>> log.collect_schema().names()
    ['model', 'fold', 'sample', 'class', 'score', 'label']
    >>> pr.scan_logs([pr.demo_log_path()]).select(pl.len()).collect().item()
    6828
    """
    flat = [q for p in paths for q in ([p] if isinstance(p, str | Path) else p)]
    files = find_log_files(str(p) for p in flat)
    if hive_partitioning is None and any(Path(p).is_dir() for p in flat):
        # a folder's key=value names are columns; Polars guesses that for a folder, but
        # not for the list of its files given here
        hive_partitioning = True
    return pl.scan_parquet(files, hive_partitioning=hive_partitioning)
