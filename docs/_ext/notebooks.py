"""MkDocs hook: the notebooks of ``notebooks/``, executed, as pages of the site.

The notebooks are stored without outputs (``tests/test_notebooks.py`` keeps them so), so a
reader on the web would see no table and no figure. At build time each one is executed in
a temporary folder (its Parquet log is written there, never into the repository) with
nbclient, converted to Markdown with nbconvert (tables as their HTML, figures as PNG files
beside the page) and added to the site as ``notebooks/<name>.md``; ``mkdocs.yml``'s nav
lists them. Nothing is fetched: the kernel is local and the images are files of the site.

Executing five notebooks takes minutes, so a rendering is kept in a cache folder (in the
system's temporary folder) under a hash of the notebook and of every polaroc source file:
any change to either executes it again. ``POLAROC_DOCS_NOTEBOOK_CACHE=0`` turns the cache
off.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
TIMEOUT = 900  # seconds per cell on a loaded machine
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+\.png)\)")


def _fingerprint(path: Path) -> str:
    digest = hashlib.sha256(path.read_bytes())
    for source in sorted((ROOT / "polaroc").rglob("*.py")):
        digest.update(source.relative_to(ROOT).as_posix().encode())
        digest.update(source.read_bytes())
    return digest.hexdigest()[:20]


def render(path: Path) -> tuple[str, dict[str, bytes]]:
    """Execute one notebook and return its Markdown and its figures (file name → PNG)."""
    import nbformat
    from nbclient import NotebookClient
    from nbconvert import MarkdownExporter

    nb = nbformat.read(path, as_version=4)
    python_path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = python_path  # the kernel imports this checkout's polaroc
    try:
        with tempfile.TemporaryDirectory(prefix="polaroc-notebook-") as work:
            client = NotebookClient(
                nb, timeout=TIMEOUT, kernel_name="python3", resources={"metadata": {"path": work}}
            )
            client.execute()  # an error in a cell fails the build, naming the cell
    finally:
        if before is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = before
    exporter = MarkdownExporter()
    body, resources = exporter.from_notebook_node(
        nb, resources={"unique_key": path.stem, "output_files_dir": ""}
    )
    images = {Path(name).name: data for name, data in resources.get("outputs", {}).items()}
    body = IMAGE.sub(lambda m: m.group(0).replace(m.group(1), Path(m.group(1)).name), body)
    return body, images


def cached_render(path: Path) -> tuple[str, dict[str, bytes]]:
    """:func:`render`, read from the cache when neither the notebook nor polaroc changed."""
    if os.environ.get("POLAROC_DOCS_NOTEBOOK_CACHE") == "0":
        return render(path)
    folder = Path(tempfile.gettempdir()) / "polaroc-docs-notebooks" / _fingerprint(path)
    index = folder / "page.json"
    if index.is_file():
        saved = json.loads(index.read_text(encoding="utf-8"))
        images = {name: (folder / name).read_bytes() for name in saved["images"]}
        return saved["markdown"], images
    body, images = render(path)
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in images.items():
        (folder / name).write_bytes(data)
    page = {"markdown": body, "images": sorted(images)}
    index.write_text(json.dumps(page), encoding="utf-8")
    return body, images


def on_files(files: Any, config: Any, **kwargs: Any) -> Any:
    """Add ``notebooks/<name>.md`` and its figures for every notebook, executed."""
    from mkdocs.structure.files import File

    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        body, images = cached_render(path)
        note = f"\n\n---\n\n*Executed from `notebooks/{path.name}` when this site was built.*\n"
        files.append(File.generated(config, f"notebooks/{path.stem}.md", content=body + note))
        for name, data in images.items():
            files.append(File.generated(config, f"notebooks/{name}", content=data))
    return files
