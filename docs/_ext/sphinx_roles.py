"""Griffe extension: render the Sphinx roles of polaroc's docstrings as Markdown.

The docstrings use numpy style with Sphinx cross-reference roles (``:func:`polaroc.auc```,
``:mod:`~polaroc.metrics.binary```). mkdocstrings renders docstrings as Markdown, where a
role would show as literal text. This extension rewrites each role before rendering: into
a cross-reference link when it names an object documented in ``docs/reference``, and into
inline code otherwise (private helpers, modules without a page).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import griffe

REFERENCE = Path(__file__).resolve().parents[1] / "reference"
ROLE = re.compile(r":(?:func|meth|class|mod|attr|data|obj|exc):`(~?)([\w.]+)(\(\))?`")
BLOCK = re.compile(r"^::: (polaroc(?:\.\w+)+)\s*$", re.M)


def documented() -> dict[str, str]:
    """Map every documented dotted name, and its last part, to its reference anchor."""
    anchors: dict[str, str] = {}
    for page in sorted(REFERENCE.glob("*.md")):
        for name in BLOCK.findall(page.read_text(encoding="utf-8")):
            anchors[name] = name
            anchors.setdefault(name.rsplit(".", 1)[1], name)
    return anchors


class SphinxRoles(griffe.Extension):
    """Rewrite ``:role:`target``` into an autorefs link or inline code."""

    def __init__(self) -> None:
        self.anchors = documented()

    def markdown(self, match: re.Match[str]) -> str:
        """The Markdown for one role: a link to its reference entry, or inline code."""
        short, target, call = match.group(1), match.group(2), match.group(3) or ""
        text = (target.rsplit(".", 1)[-1] if short else target) + call
        anchor = self.anchors.get(target)
        return f"[`{text}`][{anchor}]" if anchor else f"`{text}`"

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        """Rewrite the roles of each object's docstring as soon as it is loaded."""
        if obj.docstring is not None:
            obj.docstring.value = ROLE.sub(self.markdown, obj.docstring.value)
