"""The API's error vocabulary: error codes and the one JSON error shape (no web imports,
so the click commands can use it without loading FastAPI)."""

from __future__ import annotations

from typing import Any

JSON = "application/json"
UNKNOWN_APPLICATION = "unknown_application"  # 404 error for an unknown (uid, app) group

ERROR_SCHEMA = {
    "type": "object",
    "properties": {"status": {"type": "string"}, "error": {"type": "string"}, "detail": {}},
}
EVICTED_SCHEMA = {
    "type": "object",
    "properties": {
        "file": {"type": "string"},
        "status": {"const": "evicted"},
        "reason": {"type": "string"},
        "detail": {"type": "string"},
    },
}


def error_body(error: str, detail: object = "") -> dict[str, Any]:
    """Every 4xx of the API: ``{"status": "error", "error": CODE, "detail": ...}``."""
    return {"status": "error", "error": error, "detail": detail}


def error_doc(description: str, schema: dict[str, Any] = ERROR_SCHEMA) -> dict[str, Any]:
    """An OpenAPI response entry for a JSON error."""
    return {"description": description, "content": {JSON: {"schema": schema}}}


INVALID = error_doc("Invalid query or path parameter")
