"""The CLI's input parsing and exit codes, and Herald's input schemas, without a stack."""

from __future__ import annotations

import pytest

from lorebase.cli import build_parser, main
from lorebase.commands._runtime import Usage, call_arguments, exit_code, json_object_argument, parameters
from lorebase.commands.writes import batches
from lorebase.herald import TOOLS, idempotency_key
from lorebase.herald.server import _invalid
from lorebase.problems import Problem


def test_parameters_read_strings_and_json() -> None:
    assert parameters(["key=S-1001", "risk_score:=75", 'tags:=["a"]', "note=a=b"]) == {
        "key": "S-1001",
        "risk_score": 75,
        "tags": ["a"],
        "note": "a=b",
    }
    for bad in (["risk_score"], ["=x"], ["n:={"]):
        with pytest.raises(Usage):
            parameters(bad)


def test_read_commands_pass_their_arguments_by_the_endpoint_parameters_names() -> None:
    args = build_parser().parse_args(
        ["links", "Supplier", "S-1001", "supplies", "--at", "abc", "--limit", "5"]
    )
    args.domain = "supply"
    assert call_arguments("get_links", args) == {
        "domain": "supply",
        "kind": "Supplier",
        "key": "S-1001",
        "relation": "supplies",
        "branch": "",
        "at": "abc",
        "limit": 5,
        "cursor": "",
    }
    args = build_parser().parse_args(["record", "history", "Part", "P-1", "--values"])
    args.domain = "supply"
    assert call_arguments("get_lineage", args, at="x") == {
        "domain": "supply",
        "kind": "Part",
        "key": "P-1",
        "branch": "",
        "at": "x",
    }
    assert call_arguments("get_history", args)["values"] is True
    args = build_parser().parse_args(["records", "Supplier"])
    assert call_arguments("list_records", args)["kind"] == "Supplier"


def test_json_arguments_name_the_problem(tmp_path: object) -> None:
    assert json_object_argument('{"kind": "Supplier"}', "the query") == {"kind": "Supplier"}
    with pytest.raises(Usage, match="not valid JSON"):
        json_object_argument('{"kind": ', "the query")
    with pytest.raises(Usage, match="must be a JSON object"):
        json_object_argument("[1]", "the query")


def test_imports_are_split_records_first() -> None:
    records = [{"kind": "Plant", "values": {"plant_code": str(n)}} for n in range(5)]
    links = [{"relation": "stocked_at", "from": "P", "to": str(n)} for n in range(3)]
    parts = batches({"records": records, "links": links}, 2)
    assert [list(p) for p in parts] == [["records"]] * 3 + [["links"]] * 2
    assert sum(len(next(iter(p.values()))) for p in parts) == 8


@pytest.mark.parametrize(
    ("status", "code"),
    [(404, 2), (409, 3), (401, 4), (403, 4), (422, 1), (400, 1), (413, 1), (429, 5), (500, 5), (503, 5)],
)
def test_exit_codes(status: int, code: int) -> None:
    assert exit_code(Problem(status, "x", "y")) == code


def test_usage_errors_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["record", "fetch", "Supplier", "S-1"])
    assert exited.value.code == 1
    assert main(["context", "--refs", "Supplier"]) == 1  # not KIND/KEY: refused before any request
    assert "not a reference" in capsys.readouterr().err


def test_herald_schemas_check_the_input() -> None:
    tools = {t.name: t for t in TOOLS}
    assert _invalid(tools["lorebase_history"], {"kind": "Supplier", "key": "S-1"}) is None
    assert "required" in (_invalid(tools["lorebase_history"], {"kind": "Supplier"}) or "")
    assert "unexpected" in (_invalid(tools["lorebase_search"], {"text": "x", "bogus": 1}) or "")
    assert "is not of type" in (_invalid(tools["lorebase_search"], {"text": 3}) or "")


def test_derived_idempotency_keys_ignore_the_dry_run_flag() -> None:
    write = {"operation": "update_supplier", "parameters": {"key": "S-1"}, "dry_run": False}
    assert idempotency_key("supply", write) == idempotency_key("supply", {**write, "dry_run": True})
    assert idempotency_key("supply", write) != idempotency_key("other", write)
    assert len(idempotency_key("supply", write)) <= 255
