"""The server's OpenAPI document against the server itself: the document is valid OpenAPI, and a
bounded schemathesis run over every operation (its examples, its coverage cases, among them methods
no route accepts, and random fuzzing) finds no server error and no status, content type, header or
body that the document does not describe. Traffic goes only to the server at MK_HTTP (loopback);
every request has a timeout."""
import collections
import os

import requests
import schemathesis
from hypothesis import HealthCheck, settings
from openapi_spec_validator import validate
from schemathesis import checks
from schemathesis.specs.openapi import checks as openapi_checks

BASE = "http://" + os.environ["MK_HTTP"]
TIMEOUT = 10  # seconds, for every request
EXAMPLES = int(os.environ.get("MK_OPENAPI_EXAMPLES", "8"))  # fuzzed cases per operation

CHECKS = [
    checks.not_a_server_error,
    openapi_checks.status_code_conformance,
    openapi_checks.content_type_conformance,
    openapi_checks.response_headers_conformance,
    openapi_checks.response_schema_conformance,
    openapi_checks.unsupported_method,  # 405 with Allow for a method no route of the path accepts
    openapi_checks.allow_header_conformance,
]

schema = schemathesis.openapi.from_url(BASE + "/v2/openapi.json", timeout=TIMEOUT)

SENT = collections.Counter()


def test_document_is_valid_openapi():
    document = requests.get(BASE + "/v2/openapi.json", timeout=TIMEOUT).json()
    validate(document)
    assert document["openapi"].startswith("3.")


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_server_conforms_to_its_document(case):
    SENT[str(case.meta.phase.name)] += 1
    case.call_and_validate(checks=CHECKS, timeout=TIMEOUT)


def test_every_phase_sent_requests():
    # a run that generated (almost) nothing would pass every check above
    assert set(SENT) >= {"examples", "coverage", "fuzzing"}, SENT
    assert sum(SENT.values()) >= 200, SENT
