"""The Content-Security-Policy of the service's answers (issue 45 item 9)."""

from __future__ import annotations

import base64
import hashlib
import re


def test_answers_carry_a_policy_and_docs_runs_its_own_scripts_alone(server):
    """Issue 45 item 9, the service's side: no answer may act as a page (default-src
    'none'), and /docs, its one HTML page, runs Swagger UI's scripts from its CDN and its
    own inline script (by SHA-256) alone. Before: no policy at all."""
    with server.client() as client:
        health = client.get("/healthz")
        docs = client.get("/docs")
    assert health.headers["content-security-policy"] == "default-src 'none'; frame-ancestors 'none'"
    (inline,) = re.findall(r"<script>(.*?)</script>", docs.text, re.S)
    digest = base64.b64encode(hashlib.sha256(inline.encode()).digest()).decode()
    rules = dict(rule.split(" ", 1) for rule in docs.headers["content-security-policy"].split("; "))
    assert rules["default-src"] == "'none'"
    assert (
        rules["script-src"]
        == f"'self' https://cdn.jsdelivr.net https://fastapi.tiangolo.com 'sha256-{digest}'"
    )
