"""The REST client's requests, built from the endpoint declarations (lorebase.clients.rest.request):
keywords checked against the model, paths, query, headers and bodies as the gateway reads them, and
bad values refused before sending with the problem the gateway would answer."""

from __future__ import annotations

import inspect
from typing import Any

import orjson
import pytest

from lorebase.clients.rest import RestClient, RestSettings, build
from lorebase.contract import BY_NAME, ENDPOINTS
from lorebase.contract.branches import NewBranch
from lorebase.problems import Problem

RECORD = {"domain": "supply", "kind": "Supplier", "key": "S-1001"}


def _body(request: Any) -> Any:
    return orjson.loads(request.content)


def test_path_query_and_defaults() -> None:
    request = build(BY_NAME["get_record"], {**RECORD, "links": True, "lineage": False, "branch": ""})
    assert (request.method, request.path) == ("GET", "/api/v1/domains/supply/kinds/Supplier/records/S-1001")
    # a parameter at its default, or given None or "", is not sent: the gateway's default applies
    assert request.query == {"links": "true"} and request.content is None

    request = build(BY_NAME["diff"], {"domain": "supply", "from_revision": "abc", "to_revision": "def"})
    assert request.query == {"from": "abc", "to": "def"}  # the field's alias


def test_a_branch_keeps_its_slashes_and_other_names_are_quoted() -> None:
    branch = build(BY_NAME["get_branch"], {"domain": "supply", "branch": "agent/agt_risk/q4-audit"})
    assert branch.path == "/api/v1/domains/supply/branches/agent/agt_risk/q4-audit"
    record = build(BY_NAME["get_lineage"], {"domain": "supply", "kind": "Part", "key": "a/b?c"})
    assert record.path.endswith("/kinds/Part/records/a%2Fb%3Fc/lineage")


def test_headers_and_body_members() -> None:
    request = build(
        BY_NAME["import_data"],
        {"domain": "supply", "idempotency_key": "load-1", "records": [], "message": "", "branch": None},
    )
    assert request.headers == {"Idempotency-Key": "load-1", "Content-Type": "application/json"}
    assert _body(request) == {"records": []}  # None and "" are not given

    # a member whose name a parameter takes travels in body=; keywords add to it
    execute = build(
        BY_NAME["execute_operation"],
        {
            "domain": "supply",
            "operation": "update_supplier",
            "body": {"idempotency_key": "k"},
            "dry_run": True,
        },
    )
    assert (
        _body(execute) == {"idempotency_key": "k", "dry_run": True}
        and "Idempotency-Key" not in execute.headers
    )

    branch = build(BY_NAME["create_branch"], {"domain": "supply", "name": "work-1", "from_": "main"})
    assert _body(branch) == {"name": "work-1", "from": "main"}  # the member's JSON name
    typed = build(BY_NAME["create_branch"], {"domain": "supply", "body": NewBranch(name="w", mode="overlay")})
    assert _body(typed) == {"name": "w", "mode": "overlay"}


def test_optional_bodies_are_sent_only_when_given() -> None:
    merge = build(BY_NAME["merge_proposal"], {"domain": "supply", "proposal": "prp_1"})
    assert merge.content is None and "Content-Type" not in merge.headers
    deleted = build(BY_NAME["delete_memory"], {"record_id": "mem_1"})
    assert deleted.content is None
    assert _body(build(BY_NAME["delete_memory"], {"record_id": "mem_1", "body": {}})) == {}
    proposal = build(BY_NAME["create_proposal"], {"domain": "supply", "source": "work-1", "title": "T"})
    assert _body(proposal) == {"source": "work-1", "title": "T"}


def test_a_misspelt_or_missing_keyword_fails_at_once() -> None:
    with pytest.raises(TypeError, match=r"get_record\(\) got an unexpected keyword argument 'link'.*links"):
        build(BY_NAME["get_record"], {**RECORD, "link": True})
    with pytest.raises(TypeError, match="'key'"):
        build(BY_NAME["get_record"], {"domain": "supply", "kind": "Supplier"})
    with pytest.raises(TypeError, match="'body'"):
        build(BY_NAME["get_record"], {**RECORD, "body": {}})  # an endpoint without a body
    with pytest.raises(TypeError, match="'from'"):
        build(BY_NAME["create_branch"], {"domain": "supply", "name": "w", "from": "main"})  # from_
    with pytest.raises(TypeError, match="'parameters'"):
        build(BY_NAME["create_memory"], {"parameters": {}})  # a document body is given whole


async def test_the_client_refuses_before_connecting() -> None:
    # port 9 (discard) is never asked: each call fails while it is built
    async with RestClient(RestSettings(url="http://127.0.0.1:9")) as client:
        with pytest.raises(TypeError, match="no endpoint 'get_records'"):
            await client.call("get_records", **RECORD)
        with pytest.raises(TypeError, match="'link'"):
            await client.get_record(**RECORD, link=True)
        with pytest.raises(Problem, match="limit"):
            await client.list_proposals(domain="supply", limit=1000)


def test_bad_values_answer_the_gateways_problem_before_sending() -> None:
    with pytest.raises(Problem) as bad:
        build(BY_NAME["get_links"], {**RECORD, "relation": "supplies", "limit": -1})
    assert (bad.value.status, bad.value.code, bad.value.extra["parameter"]) == (
        400,
        "invalid-parameter",
        "limit",
    )

    with pytest.raises(Problem) as empty:
        build(BY_NAME["get_record"], {**RECORD, "key": ""})
    assert (empty.value.status, empty.value.extra["parameter"]) == (400, "key")

    with pytest.raises(Problem) as body:
        build(BY_NAME["create_branch"], {"domain": "supply", "name": "w", "mode": "sideways"})
    assert (body.value.status, body.value.code) == (422, "validation-failed")
    assert [i["path"] for i in body.value.extra["issues"]] == ["mode"]

    with pytest.raises(Problem) as required:
        build(BY_NAME["resolve"], {"domain": "supply"})
    assert required.value.extra["issues"][0] == {
        "path": "text",
        "rule": "required",
        "message": "text is required",
    }

    with pytest.raises(Problem) as deep:  # a document body nests at most MAX_DEPTH levels
        build(BY_NAME["create_memory"], {"body": {"scope": _SCOPE, "content": _nested(80)}})
    assert (deep.value.status, deep.value.code) == (400, "malformed-json")


_SCOPE = {"project_id": "p", "mission_id": None, "agent_id": "a", "visibility": "shared"}


def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


def test_every_endpoint_builds_from_its_path_parameters() -> None:
    """The generic call covers every declaration: a path filled, and a body either sent or refused
    for the members it requires (never a TypeError or an unfilled template)."""
    for endpoint in ENDPOINTS:
        arguments = {p.name: "x1" for p in endpoint.parameters if p.where == "path"}
        try:
            request = build(endpoint, arguments)
        except Problem as problem:
            if problem.code == "invalid-parameter":  # a required query parameter (diff's from and to)
                assert problem.status == 400 and "is required" in problem.detail, endpoint.name
                continue
            assert problem.status == endpoint.invalid_status, endpoint.name
            assert problem.extra["issues"][0]["rule"] == "required", endpoint.name
            continue
        assert "{" not in request.path and request.method == endpoint.method, endpoint.name


def test_every_endpoint_has_a_method_whose_signature_is_its_keywords() -> None:
    methods = {endpoint.name: getattr(RestClient, endpoint.name) for endpoint in ENDPOINTS}
    assert all(callable(method) for method in methods.values())
    record = inspect.signature(methods["get_record"])
    assert list(record.parameters)[1:] == ["domain", "kind", "key", "branch", "at", "links", "lineage"]
    assert record.parameters["links"].default is False
    assert record.parameters["key"].default is inspect.Parameter.empty
    assert "from_" in inspect.signature(methods["create_branch"]).parameters
    assert "body" in inspect.signature(methods["create_memory"]).parameters
    assert "GET /api/v1/domains/{domain}/kinds/{kind}/records/{key}" in (methods["get_record"].__doc__ or "")
