"""The command line on awkward input (issue 14): an exit code, one line, no traceback."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import polars as pl

from tests.report.test_cli import binary_log, polaroc

SETUP = "import polars as pl, numpy as np"


def assert_one_clean_line(done: subprocess.CompletedProcess, code: int = 2) -> str:
    output = done.stdout + done.stderr
    assert done.returncode == code, output
    assert "Traceback" not in output
    assert "panicked" not in output
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("polaroc: error: ")
    assert lines[0].count("polaroc:") == 1, "one prefix"
    return lines[0]


def damaged_pages(path: Path) -> bool:
    """Write a log whose Parquet magic bytes and footer are intact but whose pages are not.

    Returns whether Polars panics on it (some damage only raises an error).
    """
    import pyarrow.parquet as pq

    log = pl.DataFrame({
        "model": ["a", "b"] * 500, "fold": np.arange(1000) % 5,
        "score": np.random.default_rng(0).random(1000),
        "label": np.random.default_rng(1).random(1000) < 0.5,
    })  # fmt: skip
    log.write_parquet(path, compression="uncompressed")
    good = path.read_bytes()
    meta = pq.ParquetFile(path).metadata
    last = meta.row_group(0).column(meta.num_columns - 1)
    end = last.data_page_offset + last.total_compressed_size
    for seed in range(3, 40):
        rng = np.random.default_rng(seed)
        data = bytearray(good)
        for i in rng.integers(4, end, 40):
            data[i] = int(rng.integers(0, 256))
        path.write_bytes(bytes(data))
        probe = subprocess.run(
            [sys.executable, "-c", f"import polars as pl; pl.read_parquet({str(path)!r})"],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        if "PanicException" in probe.stderr:
            return True
    return False


def test_damaged_pages_that_make_polars_panic(tmp_path):
    path = tmp_path / "log.parquet"
    assert damaged_pages(path), "no damage pattern made Polars panic"
    assert path.read_bytes()[:4] == b"PAR1"
    assert path.read_bytes()[-4:] == b"PAR1"
    done = polaroc("report", str(path), "-o", str(tmp_path / "out"), "-q")
    line = assert_one_clean_line(done)
    assert "damaged" in line


def test_closed_pipe_after_the_files_are_written(tmp_path):
    binary_log(models=2, folds=3).write_parquet(tmp_path / "log.parquet")
    out = tmp_path / "out"
    # `polaroc report … | head -0`: the reader is gone before anything is printed.
    proc = subprocess.Popen(
        [sys.executable, "-m", "polaroc", "report", str(tmp_path / "log.parquet"), "-o", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    proc.stdout.close()
    stderr = proc.stderr.read()
    code = proc.wait(timeout=300)
    assert code == 1, stderr  # Python's documented exit status for a broken pipe
    assert "Traceback" not in stderr
    assert "Broken pipe" not in stderr
    assert "Exception" not in stderr
    for name in ("index.html", "summary.md", "paired_ttest.csv", "roc.png"):
        assert (out / name).stat().st_size > 0


def test_renamed_model_column_goes_through_the_figures(tmp_path):
    log = binary_log(models=3, folds=4).rename({"model": "clf", "fold": "cv"})
    log.write_parquet(tmp_path / "log.parquet")
    done = polaroc("report", str(tmp_path / "log.parquet"), "--model", "clf", "--fold", "cv",
                   "-o", str(tmp_path / "out"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    for png in ("roc.png", "pr.png", "auc_per_fold.png", "duncan.png"):
        assert (tmp_path / "out" / png).read_bytes()[:4] == b"\x89PNG"
    assert "clf" in pl.read_parquet(tmp_path / "out" / "folds.parquet").columns


def test_bad_labels_have_one_prefix(tmp_path):
    path = tmp_path / "log.parquet"
    binary_log(models=2, folds=3).with_columns(pl.col("label").cast(pl.Int64) * 2).write_parquet(
        path
    )
    line = assert_one_clean_line(polaroc("report", str(path), "-o", str(tmp_path / "o"), "-q"))
    assert "label" in line
    assert "2" in line


def test_empty_log_is_called_empty(tmp_path):
    path = tmp_path / "log.parquet"
    binary_log(models=2, folds=3).clear().write_parquet(path)
    line = assert_one_clean_line(polaroc("report", str(path), "-o", str(tmp_path / "o"), "-q"))
    assert "empty" in line
    assert "balanced" not in line


def test_warnings_are_one_line_without_source(tmp_path):
    binary_log(models=2, folds=3).write_parquet(tmp_path / "log.parquet")
    code = textwrap.dedent(f"""
        import sys, warnings
        from polaroc.report import cli, write
        real = write.report_tables
        def warned(*args, **kwargs):
            warnings.warn("Polars says: something odd\\nsecond line of detail", UserWarning)
            return real(*args, **kwargs)
        write.report_tables = warned
        sys.exit(cli.main(["report", {str(tmp_path / "log.parquet")!r}, "-q",
                           "-o", {str(tmp_path / "out")!r}]))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines() == ["polaroc: warning: Polars says: something odd"]


def test_version():
    done = polaroc("--version")
    assert done.returncode == 0
    import polaroc as pr

    assert done.stdout.strip() == f"polaroc {pr.__version__}"


def test_page_path_is_the_last_line(tmp_path):
    binary_log(models=2, folds=3).write_parquet(tmp_path / "log.parquet")
    done = polaroc("report", str(tmp_path / "log.parquet"), "-o", str(tmp_path / "out"), "-q")
    assert done.returncode == 0, done.stderr
    last = done.stdout.strip().splitlines()[-1]
    assert last == f"report page: {tmp_path / 'out' / 'index.html'}"


def test_without_the_report_extra_tables_are_still_written(tmp_path):
    code = textwrap.dedent(f"""
        import sys
        for name in ("great_tables", "matplotlib", "rich"):
            sys.modules[name] = None  # as if not installed
        from polaroc.report.cli import main
        sys.exit(main(["demo", "-o", {str(tmp_path)!r}]))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "pip install 'polaroc[report]'" in done.stderr
    assert "Traceback" not in done.stderr
    assert (tmp_path / "summary.md").exists()
    assert not (tmp_path / "index.html").exists()
    assert done.stdout.strip().splitlines()[-1] == f"report files: {tmp_path}"
