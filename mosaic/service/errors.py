"""The API's two JSON answers for a failure and their OpenAPI entries (no web imports,
so the click commands can use them without loading FastAPI): an error
(``{"status": "error", "error": CODE, "detail": ...}``, CODE one of
:class:`mosaic.errors.ApiError`) and an evicted log (``{"file", "status":
"evicted", "reason", "detail"}``, the object `mosaic run` writes to evicted.jsonl)."""

from __future__ import annotations

from typing import Any

from mosaic.errors import ApiError

JSON = "application/json"
EXCERPT_CHARS = 120  # of a client's value echoed in an error

ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"status": {"type": "string"}, "error": {"type": "string"}, "detail": {}},
}
EVICTED_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "file": {"type": "string"},
        "status": {"const": "evicted"},
        "reason": {"type": "string"},
        "detail": {"type": "string"},
    },
}


def error_body(error: ApiError, detail: Any = "") -> dict[str, Any]:
    """Every error answer of the API (4xx and 503) but an evicted log's:
    ``{"status": "error", "error": CODE, "detail": ...}``."""
    return {"status": "error", "error": error, "detail": detail}


def excerpt(text: str) -> str:
    """``repr(text)``, cut to its first EXCERPT_CHARS characters: an error names what it was
    asked without sending megabytes of it back."""
    if len(text) <= EXCERPT_CHARS:
        return repr(text)
    return f"{text[:EXCERPT_CHARS]!r}... ({len(text)} characters)"


def error_doc(description: str, schema: dict[str, Any] = ERROR_SCHEMA) -> dict[str, Any]:
    """An OpenAPI response entry for a JSON error."""
    return {"description": description, "content": {JSON: {"schema": schema}}}


INVALID = error_doc("Invalid query or path parameter")
