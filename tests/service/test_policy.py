"""The Content-Security-Policy of the service's answers (issue 45 item 9)."""

from __future__ import annotations

NOTHING = "default-src 'none'; frame-ancestors 'none'"


def test_answers_carry_a_policy_and_docs_needs_no_script(server):
    """Issue 45 item 9, the service's side: no answer may act as a page (default-src
    'none'), /docs included: it is a table of the endpoints that runs and fetches nothing
    (issue 47 item 8: FastAPI's page loaded Swagger UI from a CDN). Before: no policy at all."""
    with server.client() as client:
        health = client.get("/healthz")
        docs = client.get("/docs")
    assert health.headers["content-security-policy"] == NOTHING
    assert docs.status_code == 200 and docs.headers["content-security-policy"] == NOTHING
    assert "<script" not in docs.text and "https://" not in docs.text
    assert "<code>/v1/categorize</code>" in docs.text
