"""A string from a log, shown as text: never markup, in every figure and page.

A log's writer chooses its command line, application and file names. Before
2026-11-29 an application holding ``$...$`` was read by matplotlib as mathtext
(``mosaic explain`` and ``mosaic plot`` ended in ValueError or RecursionError),
a 5,000-character one drew a title that ended in MemoryError, a file name that
is not UTF-8 crashed ``mosaic explain`` and showed as ``b'...'`` in the report,
and right-to-left override characters reached the pages unmarked (a name could
show reversed). :func:`readable` is applied where such a string enters a page
(``mosaic.html.page.esc``), :func:`in_figure` where it enters a figure.
"""

from __future__ import annotations

import os
import re

# Bidirectional embedding, override and isolate controls, and the marks: each could
# reorder what follows it on screen. Shown as their code point instead.
BIDI_CONTROLS = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
ELLIPSIS = "\u2026"


def readable(value: object) -> str:
    """``value`` as text that can be written as UTF-8 and read as written: bytes (a file
    name as the store keeps it) decoded as the file system does, bytes that are not
    UTF-8 shown as ``\\xNN``, bidi controls as ``<U+202E>``."""
    text = os.fsdecode(value) if isinstance(value, bytes) else str(value)
    try:  # surrogateescape'd bytes back to bytes, then to \xNN
        text = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a lone surrogate that stood for no byte
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return BIDI_CONTROLS.sub(lambda control: f"<U+{ord(control[0]):04X}>", text)


def shortened(text: str, max_chars: int) -> str:
    """``text`` if it has at most ``max_chars`` characters, else its start and end around
    an ellipsis: ``max_chars`` characters in all."""
    if len(text) <= max_chars:
        return text
    head = (max_chars - 1) // 2
    return text[:head] + ELLIPSIS + text[len(text) - (max_chars - 1 - head) :]


def in_figure(value: object, max_chars: int) -> str:
    """``value`` for a matplotlib text: :func:`readable`, shortened to ``max_chars``, every
    ``$`` escaped (matplotlib draws ``\\$`` as a dollar and starts no mathtext)."""
    return shortened(readable(value), max_chars).replace("$", r"\$")


def display_name(label: str) -> str:
    """A label as words: `write_on_start_and_end` -> `write on start and end`."""
    return label.replace("_", " ")


def counted(n: float, noun: str, plural: str | None = None) -> str:
    """`1 log`, `2 logs`, `1,234 logs` (or the given plural)."""
    return f"{n:,.0f} {noun if n == 1 else plural or noun + 's'}"
