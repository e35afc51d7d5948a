"""Griffe extension: render the reStructuredText habits of polaroc's docstrings as Markdown.

The docstrings are numpy style, written for Sphinx; mkdocstrings renders their prose as
Markdown. Two habits would show badly, so this extension rewrites them before rendering:

* cross-reference roles (``:func:`polaroc.auc```, ``:mod:`~polaroc.metrics.binary```)
  become a link when ``docs/reference`` documents the name, and inline code otherwise
  (private helpers, modules without a page);
* definition lists (a term line, its definition indented four spaces below) become
  Markdown definition lists (``def_list``) instead of one run-on paragraph. Only the
  free text is touched — the summary and description, and ``Notes`` — never the
  sections the numpy parser reads by their indentation, nor the examples.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import griffe

REFERENCE = Path(__file__).resolve().parents[1] / "reference"
ROLE = re.compile(r":(?:func|meth|class|mod|attr|data|obj|exc):`(~?)([\w.]+)(\(\))?`")
BLOCK = re.compile(r"^::: (polaroc(?:\.\w+)+)\s*$", re.M)
SECTION = re.compile(r"^(\w[\w ]*)\n-{3,}$", re.M)
FREE_SECTIONS = {"Notes"}
LIST_ITEM = re.compile(r"^(?:[-*+] |\d+[.)] )")


def documented() -> dict[str, str]:
    """Map every documented dotted name, and its last part, to its reference anchor."""
    anchors: dict[str, str] = {}
    for page in sorted(REFERENCE.glob("*.md")):
        for name in BLOCK.findall(page.read_text(encoding="utf-8")):
            anchors[name] = name
            anchors.setdefault(name.rsplit(".", 1)[1], name)
    return anchors


def definition_lists(text: str) -> str:
    """Turn RST definition lists (term, then a definition indented 4 spaces) into def_list."""
    lines = text.split("\n")
    out: list[str] = []
    for i, line in enumerate(lines):
        following = lines[i + 1] if i + 1 < len(lines) else ""
        is_term = (
            line.strip()
            and not line.startswith(" ")
            and not LIST_ITEM.match(line)
            and following.startswith("    ")
            and not following.startswith("     ")
        )
        starts_definition = i > 0 and out and out[-1].endswith("\x00")
        if starts_definition:
            out[-1] = out[-1].rstrip("\x00")
            out.append(":   " + line[4:])
            continue
        if is_term:
            if out and out[-1].strip():
                out.append("")
            out.append(line + "\x00")  # mark: the next line opens the definition
            continue
        out.append(line)
    return "\n".join(out)


def free_text(text: str) -> str:
    """Apply :func:`definition_lists` to the description and free sections only."""
    parts = SECTION.split(text)  # [description, title, body, title, body, ...]
    parts[0] = definition_lists(parts[0])
    for k in range(1, len(parts), 2):
        if parts[k] in FREE_SECTIONS:
            parts[k + 1] = definition_lists(parts[k + 1])
    rebuilt = [parts[0]]
    for k in range(1, len(parts), 2):
        rebuilt.append(f"{parts[k]}\n{'-' * len(parts[k])}{parts[k + 1]}")
    return "".join(rebuilt)


class Docstrings(griffe.Extension):
    """Rewrite Sphinx roles and RST definition lists of every docstring into Markdown."""

    def __init__(self) -> None:
        self.anchors = documented()

    def role(self, match: re.Match[str]) -> str:
        """The Markdown for one role: a link to its reference entry, or inline code."""
        short, target, call = match.group(1), match.group(2), match.group(3) or ""
        text = (target.rsplit(".", 1)[-1] if short else target) + call
        anchor = self.anchors.get(target)
        return f"[`{text}`][{anchor}]" if anchor else f"`{text}`"

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        """Rewrite each object's docstring as soon as it is loaded."""
        if obj.docstring is not None:
            obj.docstring.value = free_text(ROLE.sub(self.role, obj.docstring.value))
