"""The API reference site: it builds offline with ``--strict`` and documents every public name.

The reference pages (``docs/reference/*.md``) hold one ``::: polaroc.name`` block per public
name. The lists they make must equal the package's own: ``polaroc.__all__`` (a submodule
listed there, such as ``distributed``, stands for the names of its ``__all__``), the figures
of ``polaroc.plot``, the report's tables in ``polaroc.report`` and, once it exists,
``polaroc.distributed``. A name added to the package without a reference block, or a block
left behind for a removed name, fails here.
"""

from __future__ import annotations

import html
import inspect
import math
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

import matplotlib.image
import pytest
import yaml

import polaroc
import polaroc.plot
import polaroc.report

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
REFERENCE = DOCS / "reference"
NOTEBOOKS = ROOT / "notebooks"
PNG = b"\x89PNG\r\n\x1a\n"
BLOCK = re.compile(r"^::: (polaroc(?:\.\w+)+)\s*$", re.M)

# The build runs in a child interpreter whose sockets refuse to connect, so a theme asset,
# font or object inventory fetched at build time fails the build instead of going unseen.
OFFLINE_BUILD = """
import socket
import sys


def refuse(*args, **kwargs):
    raise OSError("the docs build must not use the network")


socket.socket.connect = refuse
socket.socket.connect_ex = refuse
socket.create_connection = refuse
from mkdocs.__main__ import cli

sys.exit(cli())
"""


def members(module: ModuleType, prefix: str) -> list[str]:
    """Public dotted names of a module's ``__all__``, submodules expanded to their members."""
    names = []
    for name in module.__all__:
        obj = getattr(module, name)
        if isinstance(obj, ModuleType):
            names += members(obj, f"{prefix}.{name}")
        else:
            names.append(f"{prefix}.{name}")
    return names


def public_names() -> list[str]:
    names = members(polaroc, "polaroc") + members(polaroc.plot, "polaroc.plot")
    names += members(polaroc.report, "polaroc.report")
    distributed = getattr(polaroc, "distributed", None)  # pr.distributed.evaluate
    if isinstance(distributed, ModuleType) and "distributed" not in polaroc.__all__:
        names += members(distributed, "polaroc.distributed")
    return sorted(set(names))


def documented() -> list[str]:
    return [
        name for page in sorted(REFERENCE.glob("*.md")) for name in BLOCK.findall(page.read_text())
    ]


def nav_pages(nav: object) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, dict):
        return [page for value in nav.values() for page in nav_pages(value)]
    if isinstance(nav, list):
        return [page for item in nav for page in nav_pages(item)]
    return []


def config() -> dict[str, object]:
    return yaml.safe_load((ROOT / "mkdocs.yml").read_text())


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    command = [sys.executable, "-c", OFFLINE_BUILD, "build", "--strict", "--quiet"]
    command += ["--config-file", str(ROOT / "mkdocs.yml"), "--site-dir", str(out)]
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=env, timeout=3600)
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def rendered_sections(site: Path) -> dict[str, str]:
    """The rendered HTML of each reference entry, from its heading to the next one."""
    sections = {}
    for page in (site / "reference").rglob("index.html"):
        html = page.read_text()
        heads = [(m.start(), m.group(1)) for m in re.finditer(r'<h2 id="(polaroc[\w.]+)"', html)]
        ends = [start for start, _ in heads[1:]] + [len(html)]
        for (start, name), end in zip(heads, ends[: len(heads)], strict=True):
            sections[name] = html[start:end]
    return sections


def test_every_public_name_has_exactly_one_reference_block():
    blocks = documented()
    repeated = sorted(name for name, n in Counter(blocks).items() if n > 1)
    assert not repeated, f"documented more than once in docs/reference: {repeated}"
    missing = sorted(set(public_names()) - set(blocks))
    assert not missing, f"add a '::: name' block to a page of docs/reference for: {missing}"
    stale = sorted(set(blocks) - set(public_names()))
    assert not stale, f"docs/reference documents names that are not public: {stale}"


def test_every_page_is_in_the_nav_and_the_nav_names_existing_pages():
    pages = nav_pages(config()["nav"])
    on_disk = [str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")]
    # docs/_ext/notebooks.py adds every notebook, executed, as notebooks/<name>.md
    executed = [f"notebooks/{p.stem}.md" for p in NOTEBOOKS.glob("*.ipynb")]
    assert sorted(pages) == sorted(on_disk + executed)
    for page in ("getting-started.md", "log-format.md", "metrics.md", "comparing.md"):
        assert page in pages
    for page in ("distributed.md", "report.md", "architecture.md"):
        assert page in pages


def test_the_config_stays_offline():
    settings = config()
    assert settings["theme"]["font"] is False, "Google fonts are fetched unless font: false"
    handlers = [
        plugin["mkdocstrings"]["handlers"]
        for plugin in settings["plugins"]
        if isinstance(plugin, dict) and "mkdocstrings" in plugin
    ]
    assert handlers, "the reference is rendered by mkdocstrings"
    for handler in handlers[0].values():
        assert "inventories" not in handler, "no remote objects.inv"
        assert "import" not in handler, "no remote objects.inv"
    for key in ("extra_javascript", "extra_css"):
        assert not settings.get(key), f"mkdocs.yml must not load {key}"
    assert "http" not in (ROOT / "mkdocs.yml").read_text()


def test_site_builds_strict_and_renders_every_public_name(site):
    pages = "".join(p.read_text() for p in (site / "reference").rglob("index.html"))
    unrendered = [name for name in public_names() if f'id="{name}"' not in pages]
    assert not unrendered, f"reference blocks that rendered no heading: {unrendered}"
    # numpy sections became tables and the examples became code, for every documented name
    sections = rendered_sections(site)
    no_examples = [
        name for name in public_names() if 'doc-section-title">Examples:' not in sections[name]
    ]
    assert not no_examples, f"reference entries without a rendered Examples section: {no_examples}"
    assert all(
        "&gt;&gt;&gt;" in sections[name] for name in public_names() if "Examples:" in sections[name]
    )
    # Sphinx roles are rewritten by docs/_ext/docstrings.py into links or code
    roles = sorted(set(re.findall(r":(?:func|mod|class|meth|data|attr):`?[\w.~]+", pages)))
    assert not roles, f"docstring roles rendered as text: {roles[:5]}"
    assert 'class="autorefs autorefs-internal"' in pages
    # ... and RST definition lists (evaluate's columns) into Markdown ones
    evaluate = (site / "reference" / "evaluation" / "index.html").read_text()
    assert re.search(r"<dt><code>n_classes</code></dt>\s*<dd>", evaluate)
    # docs/_ext/hooks.py links the guides' inline names to the reference
    guide = (site / "comparing" / "index.html").read_text()
    assert 'href="../reference/compare/#polaroc.paired_ttest"' in guide


PARAMETER_ROW = re.compile(
    r'<tr class="doc-section-item">\s*<td>\s*<code>(\w+)</code>.*?</tr>', re.S
)
CELL = re.compile(r"<td>(.*?)</td>", re.S)


def rendered_defaults(section: str) -> dict[str, str]:
    """Each row of an entry's Parameters table: the parameter and its Default cell's text."""
    table = re.search(
        r'doc-section-title">Parameters:</span>.*?<tbody>(.*?)</tbody>', section, re.S
    )
    if table is None:
        return {}
    rows = {}
    for row in PARAMETER_ROW.finditer(table.group(1)):
        default = CELL.findall(row.group(0))[-1]
        rows[row.group(1)] = html.unescape(re.sub(r"<[^>]+>", "", default)).strip()
    return rows


def public_object(name: str) -> object:
    obj: object = polaroc
    for part in name.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def same_default(shown: str, default: object, namespace: dict[str, object]) -> bool:
    """Whether the rendered default (source text, evaluated where it was written) is ``default``."""
    if default is inspect.Parameter.empty:
        return shown == "required"
    try:
        value = eval(shown, dict(namespace))  # the package's own default expressions
    except Exception:  # an unevaluable cell is a wrong default
        return False
    if isinstance(value, float) and isinstance(default, float) and math.isnan(default):
        return math.isnan(value)
    return bool(value == default)


def test_the_reference_shows_every_parameters_own_default(site):
    # Grouped numpy entries ("model, fold, dataset : str") used to render the first name's
    # default for all of them; docs/_ext/docstrings.py gives each name its own row.
    sections = rendered_sections(site)
    checked, wrong = 0, []
    for name in public_names():
        obj = public_object(name)
        try:
            signature = inspect.signature(obj)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            continue
        function = obj.__init__ if inspect.isclass(obj) else obj  # type: ignore[misc]
        namespace = vars(inspect.getmodule(inspect.unwrap(function)))
        for parameter, shown in rendered_defaults(sections[name]).items():
            if parameter not in signature.parameters:
                wrong.append(f"{name}({parameter}): documented but not in the signature")
                continue
            checked += 1
            default = signature.parameters[parameter].default
            if not same_default(shown, default, namespace):
                wrong.append(f"{name}({parameter}): the reference shows {shown}, not {default!r}")
    assert checked > 300, "the reference's parameter tables were not found"
    assert not wrong, "\n".join(wrong[:20])


@pytest.mark.parametrize("notebook", sorted(NOTEBOOKS.glob("*.ipynb")), ids=lambda p: p.stem)
def test_the_notebooks_are_pages_with_their_outputs_and_figures(site, notebook):
    # stored without outputs (tests/test_notebooks.py), rendered executed by the build
    page = (site / "notebooks" / notebook.stem / "index.html").read_text()
    assert "<h1" in page, "the notebook's title heading"
    outputs = page.count("<pre") + page.count("<table")
    assert outputs > 2, "the executed cells' printed tables and results"
    images = re.findall(r'<img[^>]*src="([^"]+\.png)"', page)
    if re.search(r"\b(?:plot|plt)\.", notebook.read_text()):
        assert images, "the notebook's figures"
    for src in images:
        png = (site / "notebooks" / notebook.stem / src).resolve()
        assert png.read_bytes().startswith(PNG), f"{src} is not a PNG"
        assert matplotlib.image.imread(png).size > 0  # the whole image decodes


def test_site_loads_nothing_from_the_network(site):
    remote = re.compile(
        r"""<(?:script|link|img|iframe|source)\b[^>]*\b(?:src|href)=["'](?:https?:)?//"""
    )
    for page in site.rglob("*.html"):
        html = page.read_text()
        assert not remote.search(html), f"{page.relative_to(site)} loads a remote resource"
        assert "fonts.googleapis" not in html
        assert "fonts.gstatic" not in html
    for sheet in site.rglob("*.css"):
        assert not re.search(r"@import\s+url\(\s*[\"']?(?:https?:)?//", sheet.read_text())


# distributed.md shows cluster sessions (ray://head-node, s3://...): its own tests run it
RUNNABLE = sorted(
    p.name for p in DOCS.glob("*.md") if "```python" in p.read_text() and p.name != "distributed.md"
)


@pytest.mark.parametrize("page", RUNNABLE)
def test_the_pages_python_examples_run(page):
    namespace: dict[str, object] = {}  # a page's blocks run in order, as one script
    for block in re.findall(r"```python\n(.*?)```", (DOCS / page).read_text(), re.S):
        exec(compile(block, f"docs/{page}", "exec"), namespace)


def test_getting_started_shows_the_readmes_two_commands():
    readme = (ROOT / "README.md").read_text()
    commands = re.search(r"```bash\n(.*?)```", readme, re.S).group(1).strip()
    page = (DOCS / "getting-started.md").read_text()
    assert f"```bash\n{commands}\n```" in page


def test_the_decision_guide_cites_its_papers():
    guide = (DOCS / "comparing.md").read_text()
    for paper in (
        "Demšar (2006)",
        "Dietterich (1998)",
        "Bouckaert & Frank (2004)",
        "Nadeau & Bengio (2003)",
        "Benavoli et al. (2017)",
        "Alpaydın (1999)",
    ):
        assert paper in guide, f"docs/comparing.md should cite {paper}"


def test_the_architecture_page_names_real_modules_and_every_room():
    page = (DOCS / "architecture.md").read_text()
    named = set(re.findall(r"\b(polaroc/[\w/]+\.py)\b", page))
    assert named, "the architecture page names the modules it describes"
    gone = sorted(path for path in named if not (ROOT / path).is_file())
    assert not gone, f"docs/architecture.md names modules that do not exist: {gone}"
    files = {p.name for p in (ROOT / "polaroc").rglob("*.py")}
    missing = sorted(set(re.findall(r"`(\w+\.py)`", page)) - files)
    assert not missing, f"docs/architecture.md names files polaroc/ does not have: {missing}"
    rooms = sorted(p.parent.name for p in (ROOT / "polaroc").glob("*/__init__.py"))
    unnamed = [room for room in rooms if f"polaroc/{room}/" not in page]
    assert not unnamed, f"docs/architecture.md should say what polaroc/{unnamed}/ holds"
    core = sorted(
        f"core/{p.name}"
        for p in (ROOT / "polaroc" / "core").glob("*.py")
        if p.name != "__init__.py"
    )
    undescribed = [name for name in core if f"`{name}`" not in page]
    assert not undescribed, f"docs/architecture.md should describe the core modules {undescribed}"
