"""Griffe extension: render the reStructuredText habits of polaroc's docstrings as Markdown.

The docstrings are numpy style, written for Sphinx; mkdocstrings renders their prose as
Markdown. Two habits would show badly, so this extension rewrites them before rendering:

* cross-reference roles (``:func:`polaroc.auc```, ``:mod:`~polaroc.metrics.binary```)
  become a link when ``docs/reference`` documents the name, and inline code otherwise
  (private helpers, modules without a page);
* definition lists (a term line, its definition indented four spaces below) become
  Markdown definition lists (``def_list``) instead of one run-on paragraph. Only the
  free text is touched — the summary and description, and ``Notes`` — never the
  sections the numpy parser reads by their indentation, nor the examples;
* a grouped parameter entry (``model, fold, dataset : str``) becomes one entry per name
  with the same description: griffe's numpy parser gives a group the default of its
  first name, so ``fold``'s row would show ``'model'``. Each row now shows its own
  default from the signature (tests/test_docs_site.py compares them).
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
PARAMETER_SECTIONS = {"Parameters", "Other Parameters"}
GROUPED = re.compile(r"^(\w+(?:, *\w+)+)( *:.*)?$")
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


def ungrouped(body: str) -> str:
    """Split grouped numpy parameter entries (``a, b : str``) into one entry per name."""
    lines = body.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        match = GROUPED.match(lines[i])
        if not match:
            out.append(lines[i])
            i += 1
            continue
        end = i + 1  # the description: indented lines, and blank lines inside it
        while end < len(lines) and (
            lines[end].startswith(" ")
            or (not lines[end].strip() and end + 1 < len(lines) and lines[end + 1].startswith(" "))
        ):
            end += 1
        for name in re.split(r", *", match.group(1)):
            out.append(name + (match.group(2) or ""))
            out.extend(lines[i + 1 : end])
        i = end
    return "\n".join(out)


def free_text(text: str) -> str:
    """Apply :func:`definition_lists` to the free sections, :func:`ungrouped` to parameters."""
    parts = SECTION.split(text)  # [description, title, body, title, body, ...]
    parts[0] = definition_lists(parts[0])
    for k in range(1, len(parts), 2):
        if parts[k] in FREE_SECTIONS:
            parts[k + 1] = definition_lists(parts[k + 1])
        elif parts[k] in PARAMETER_SECTIONS:
            parts[k + 1] = ungrouped(parts[k + 1])
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
