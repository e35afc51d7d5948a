"""MkDocs hook: link the guide pages' inline names to their reference entries.

An inline ``pr.auc`` or ``polaroc.plot.cd_diagram`` in a page becomes a cross-reference
(resolved by mkdocs-autorefs) when ``docs/reference`` documents that name, so the guides
stay plain Markdown and never link to a name without an entry.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

REFERENCE = Path(__file__).resolve().parents[1] / "reference"
BLOCK = re.compile(r"^::: (polaroc(?:\.\w+)+)\s*$", re.M)
INLINE = re.compile(r"(?<![`\[])`((?:pr|polaroc)((?:\.\w+)+))`(?![`\]])")


def documented() -> set[str]:
    """Every dotted name with a ``:::`` block in ``docs/reference``."""
    return {
        name
        for page in sorted(REFERENCE.glob("*.md"))
        for name in BLOCK.findall(page.read_text(encoding="utf-8"))
    }


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """Turn inline ``pr.name`` code into a link to ``polaroc.name`` when it is documented."""
    names = documented()

    def link(match: re.Match[str]) -> str:
        target = "polaroc" + match.group(2)
        return f"[`{match.group(1)}`][{target}]" if target in names else match.group(0)

    return INLINE.sub(link, markdown)
