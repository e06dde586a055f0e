"""docs/method.md as HTML, so the pages carry the rules their reasons cite.

The wheel installs ``mosaic/html/method.md`` (a link to docs/method.md in
the source tree: one text, never two). Each heading gets GitHub's anchor
(``### 3.4 Periodicity by mean shift`` -> ``#34-periodicity-by-mean-shift``),
so a reason's "SPEC 3.4" links to its section on a report's
``method.html`` or inside a `mosaic explain` page. Links to the other
documents, which the pages do not carry, become plain text.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

from markdown_it import MarkdownIt
from markdown_it.token import Token

_NOT_IN_SLUG = re.compile(r"[^\w\- ]")


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as dashes."""
    return _NOT_IN_SLUG.sub("", heading.strip().lower()).replace(" ", "-")


@cache
def method_text() -> str:
    return resources.files("mosaic.html").joinpath("method.md").read_text(encoding="utf-8")


@cache
def sections() -> dict[str, str]:
    """Section number ('3.4') -> anchor, for every numbered heading of the method."""
    found = {}
    for line in method_text().splitlines():
        heading = re.match(r"#{2,4} (\d+(?:\.\d+)*)\.? ", line)
        if heading:
            found[heading.group(1)] = slug(line.lstrip("#"))
    return found


def section_anchor(rule: str) -> str:
    """The anchor of SPEC ``rule`` ('3.4'), or of its chapter ('3') when it has none."""
    known = sections()
    return known.get(rule) or known.get(rule.split(".")[0], "")


def _plain_links(inline: list[Token]) -> None:
    """Links out of the page become their text (another document, or the web: the pages
    fetch nothing); links to a heading of the method stay."""
    dropped: list[bool] = []
    for token in inline:
        if token.type == "link_open":
            dropped.append(not str(token.attrGet("href") or "").startswith("#"))
        if token.type in ("link_open", "link_close") and (
            dropped[-1] if token.type == "link_open" else dropped.pop()
        ):
            token.type, token.tag, token.nesting, token.attrs = "text", "", 0, {}


@cache
def method_html() -> str:
    """The method as HTML, headings with their anchors."""
    parser = MarkdownIt("commonmark").enable("table")
    tokens = parser.parse(method_text())
    for token, inline in zip(tokens, tokens[1:]):
        if token.type == "heading_open":
            token.attrSet("id", slug(inline.content))
    for token in tokens:
        _plain_links(token.children or [])
    return str(parser.renderer.render(tokens, parser.options, {}))
