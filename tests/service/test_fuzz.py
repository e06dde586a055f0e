"""Fuzz the live API from its own OpenAPI schema (schemathesis): never a 5xx,
and every answer as documented (status code, content type, body schema);
invalid requests are rejected. Not checked: "valid data is accepted" — a body
that is schema-valid binary is rarely a Darshan log, so a 422 is right.

Bounded: a few dozen generated requests (valid and invalid ones) per
operation, so the module stays within seconds. Every request carries the
token, so the fuzzing reaches the endpoints rather than the 401 before them.
"""

from __future__ import annotations

import itertools

import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    negative_data_rejection,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

MAX_EXAMPLES = 15
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    negative_data_rejection,
]


def has_inputs(operation) -> bool:
    return bool(operation.query or operation.path_parameters or operation.body)


def test_no_server_error_on_generated_requests(server):
    auth = {"Authorization": f"Bearer {server.token}"}
    schema = schemathesis.openapi.from_url(server.url + "/openapi.json", headers=auth)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) == 11  # HEAD /healthz too; the running registry's three; the forecast
    statuses = set()
    for operation, mode in itertools.product(operations, GenerationMode):
        if mode == GenerationMode.NEGATIVE and not has_inputs(operation):
            continue  # nothing to make invalid
        strategy = operation.as_strategy(generation_mode=mode)

        @given(case=strategy)
        @settings(
            max_examples=MAX_EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck)
        )
        def no_server_error(case):
            response = case.call(headers=auth)
            statuses.add(response.status_code)
            case.validate_response(response, checks=CHECKS)

        no_server_error()
    assert max(statuses) < 500 and 200 in statuses
    assert server.alive()
