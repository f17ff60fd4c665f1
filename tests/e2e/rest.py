"""Helpers for tests of the REST API (/api/v1): calls with API tokens, and checks of responses against
openapi/openapi.yaml."""

from __future__ import annotations

import hashlib
import json

import jsonschema
import requests
import yaml

from depot_harness import REPO_ROOT

SPEC_PATH = REPO_ROOT / "openapi" / "openapi.yaml"
SPEC = yaml.safe_load(SPEC_PATH.read_text())
REDOCLY = REPO_ROOT / "tests" / "e2e" / "js" / "node_modules" / ".bin" / "redocly"


def token_for(depot, user: str, *extra: str) -> dict:
    out = json.loads(depot.depotctl("token", "create", user, "--name", "e2e", *extra, "--json",
                                   leak_check=False).stdout)
    assert out["token"].startswith("dpt_") and out["user_id"] == user
    return out


def call(depot, method: str, path: str, *, token: str | None = None, body=None, raw: bytes | None = None,
         headers: dict | None = None) -> requests.Response:
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else b"")
    h = dict(headers or {})
    if body is not None:
        h.setdefault("Content-Type", "application/json")
    if token:
        h["Authorization"] = f"Bearer {token}"
    return requests.request(method, depot.endpoint + path, data=data, headers=h, timeout=60)


def operation(method: str, path_template: str) -> dict:
    return SPEC["paths"][path_template][method.lower()]


def validate(response: requests.Response, method: str, path_template: str) -> dict:
    """Checks the response against the OpenAPI document: a documented status, the documented media type,
    and a body valid against the documented schema. Returns the parsed body."""
    op = operation(method, path_template)
    status = str(response.status_code)
    assert status in op["responses"], f"{method} {path_template}: status {status} is not documented"
    documented = op["responses"][status]
    if "$ref" in documented:
        documented = SPEC["components"]["responses"][documented["$ref"].rsplit("/", 1)[1]]
    media = response.headers["Content-Type"].split(";")[0]
    assert media in documented["content"], f"{method} {path_template} {status}: media type {media}"
    schema = documented["content"][media]["schema"]
    body = response.json()
    jsonschema.validate(body, {**schema, "components": SPEC["components"]},
                        cls=jsonschema.Draft202012Validator, format_checker=jsonschema.FormatChecker())
    return body


def assert_problem(response: requests.Response, status: int, type_suffix: str) -> dict:
    assert response.status_code == status, response.text
    assert response.headers["Content-Type"] == "application/problem+json"
    problem = response.json()
    jsonschema.validate(problem, SPEC["components"]["schemas"]["Problem"])
    assert problem["status"] == status
    assert problem["type"] == f"urn:depot:problem:{type_suffix}", problem
    assert problem["request_id"] == response.headers["x-request-id"]
    return problem


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
