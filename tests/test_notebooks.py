"""The notebooks that re-do the seed studies (and go beyond them): each runs top to bottom and
is committed clean."""

from __future__ import annotations

import os
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "notebooks"
NOTEBOOKS = sorted(FOLDER.glob("*.ipynb"))
CELL_TIMEOUT = 600  # seconds; each notebook takes about a minute of CPU, more on a loaded machine

# an absolute path in a committed notebook ties it to one machine
ABSOLUTE_PATH = re.compile(r"""["'](?:/(?:home|Users|tmp|work|root|mnt|opt|var)/|[A-Za-z]:\\)""")


def test_every_seed_study_has_a_notebook():
    assert [p.name for p in NOTEBOOKS] == [
        "01_bradley_1997.ipynb",
        "02_hand_till_2001.ipynb",
        "03_wu_flach_2005.ipynb",
        "04_aslan_2009.ipynb",
        "05_repeated_cv.ipynb",
        "06_beyond_the_auc.ipynb",
    ]
    index = (FOLDER / "README.md").read_text()
    for path in NOTEBOOKS:
        assert path.name in index, f"notebooks/README.md must link {path.name}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_committed_clean(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert nb.metadata["kernelspec"]["name"] == "python3"
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    assert code, "a notebook without code"
    for cell in code:
        assert cell.outputs == [], "strip the outputs before committing"
        assert cell.execution_count is None, "clear the execution counts before committing"
    source = "\n".join(cell.source for cell in nb.cells)
    assert not ABSOLUTE_PATH.search(source), "no absolute paths: notebooks run anywhere"
    assert nb.cells[0].cell_type == "markdown", "start with a title and what the paper did"
    assert nb.cells[0].source.startswith("# ")
    # the log is written in the working directory and read back lazily
    assert re.search(r"""write_parquet\(["'][^/"']+\.parquet["']\)""", source)
    assert re.search(r"pr\.scan_logs\(|pl\.scan_parquet\(", source)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_top_to_bottom(path, tmp_path, monkeypatch):
    # the kernel imports this checkout's polaroc even when it is not installed
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    )
    before = sorted(FOLDER.iterdir())
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=CELL_TIMEOUT,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()  # raises CellExecutionError, naming the cell, on any error

    assert list(tmp_path.glob("*.parquet")), "the notebook writes its log in its working directory"
    assert sorted(FOLDER.iterdir()) == before, "the notebook wrote into the repository"
    errors = [
        o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"
    ]
    assert not errors
    images = [
        o
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
        if "image/png" in o.get("data", {})
    ]
    if "plot." in "\n".join(c.source for c in nb.cells) or "plt." in "\n".join(
        c.source for c in nb.cells
    ):
        assert images, "the notebook's figures must be displayed, not just created"
