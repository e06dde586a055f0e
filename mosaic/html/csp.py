"""The Content-Security-Policy of every page mosaic writes or serves.

Why: a page shows names a log's writer chose. They are escaped where they enter
markup (:func:`mosaic.html.page.esc`); the policy is the second wall, should an
escape ever be missed: no script runs but the page's own inline ones (named by
their SHA-256) and those of its own site ('self': a report's shared assets),
nothing is fetched from elsewhere, no form posts, no ``<base>`` redirects links.
Styles may be inline: the pages size bars and fields with ``style=``, and a style
runs no code. The pages are self-contained, so this costs nothing.
"""

from __future__ import annotations

import base64
import hashlib
import re

INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.S)  # executed: no type, no src
NOTHING = "default-src 'none'; frame-ancestors 'none'"  # the API's answers: no page at all


def policy(markup: str) -> str:
    """The policy of the page ``markup``: its inline scripts by hash and its site's files."""
    hashes = [
        "'sha256-" + base64.b64encode(hashlib.sha256(script.encode()).digest()).decode() + "'"
        for script in INLINE_SCRIPT.findall(markup)
    ]
    sources = "'self'"
    return "; ".join(
        [
            "default-src 'none'",
            f"script-src {' '.join([sources, *hashes])}",
            f"style-src {sources} 'unsafe-inline'",
            f"img-src {sources} data:",
            "connect-src 'self'",
            "base-uri 'none'",
            "form-action 'none'",
            "object-src 'none'",
        ]
    )
