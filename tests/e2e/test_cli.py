"""The `lorebase` client commands against a running stack: --json answers, human output, exit codes
(docs/cli.md) and problem titles on stderr. Most run `main()` in process; the entry point itself and
`events --follow` run as processes."""

from __future__ import annotations

import json
import selectors
import signal
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

import httpx
import pytest

from lorebase.cli import main
from lorebase.embedded import free_port
from tests.e2e.running import Running

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]


class Cli:
    def __init__(self, running: Running, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
        self.running, self.capsys, self.monkeypatch = running, capsys, monkeypatch

    def __call__(self, *argv: str, key: str | None = None, url: str | None = None) -> tuple[int, str, str]:
        for name, value in self.running.env(key).items():
            if name.startswith("LOREBASE_"):
                self.monkeypatch.setenv(name, value)
        if url:
            self.monkeypatch.setenv("LOREBASE_URL", url)
        self.capsys.readouterr()
        try:
            code = main(list(argv))
        except SystemExit as exc:  # argparse
            code = int(exc.code or 0)
        out, err = self.capsys.readouterr()
        return code, out, err

    def json(self, *argv: str, key: str | None = None) -> Any:
        code, out, err = self(*argv, "--json", key=key)
        assert code == 0, (argv, code, out, err)
        return json.loads(out)


@pytest.fixture
def cli(running: Running, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Cli:
    return Cli(running, capsys, monkeypatch)


def test_reads_answer_json_and_tables(cli: Cli, tmp_path: Path) -> None:
    found = cli.json("search", "Poznan", "--trait", "Located")
    assert [r["ref"] for r in found["results"]] == ["Supplier/S-1001"]
    code, out, _ = cli("search", "Poznan", "--kind", "Supplier")
    assert code == 0 and out.splitlines()[0].split() == ["REF", "TITLE", "SCORE"] and "S-1001" in out

    pack = cli.json("context", "--lens", "supplier_risk", "--refs", "Supplier/S-1001", "--budget", "3000")
    assert pack["seeds"][0]["ref"] == "Supplier/S-1001" and pack["budget"]["limit_tokens"] == 3000
    code, out, _ = cli("context", "--refs", "Supplier/S-1001", "--depth", "0", "--markdown")
    assert code == 0 and out.startswith("# Context: supply/main")

    query = tmp_path / "poznan.json"
    query.write_text(
        json.dumps({"kind": "Supplier", "where": {"attr": "city", "op": "eq", "value": "Poznan"}})
    )
    answer = cli.json("query", str(query))
    assert answer["count"] == 1 and answer["records"][0]["key"] == "S-1001"
    grouped = cli.json("query", '{"kind": "Supplier", "aggregate": {"group_by": "country"}}')
    assert grouped["aggregate"]["count"] == 30

    resolved = cli.json("resolve", "suppliers in Poznan")
    assert any(
        c.get("predicate") == {"attr": "city", "op": "eq", "value": "Poznan"} for c in resolved["candidates"]
    )

    record = cli.json("record", "get", "Supplier", "S-1001")
    assert record["values"]["city"] == "Poznan" and "links" in record
    history = cli.json("record", "history", "Supplier", "S-1001")
    first, latest = history["changes"][-1]["revision"], history["changes"][0]["revision"]
    assert history["changes"][-1]["change"] == "created"
    lineage = cli.json("record", "lineage", "Supplier", "S-1001", "--at", first)
    assert lineage["attributes"]["risk_score"]["value"] == "72"
    code, out, _ = cli("record", "explain", "Supplier", "S-1001")
    assert code == 0 and out.startswith("# Explain: Supplier/S-1001")

    diff = cli.json("diff", first[:12], latest)
    assert diff["records"]["changed"][0]["ref"] == "Supplier/S-1001"

    health = cli.json("health")
    assert health["summary"]["ok"] is True
    code, out, _ = cli("health", "Supplier", "--markdown")
    assert code == 0 and out.startswith("# Health of supply")
    schema = cli.json("schema")
    assert "supplier_risk" in [lens["name"] for lens in schema["lenses"]]
    links = cli.json("links", "Supplier", "S-1001", "supplies")
    assert links["links"] and links["other_kind"] == "Part"
    page = cli.json("records", "Supplier", "--limit", "2")
    assert [r["key"] for r in page["records"]] == ["S-1001", "S-1002"] and page["next_cursor"]
    relation = schema["relations"][0]["name"]
    assert len(cli.json("relation-links", relation, "--limit", "1")["links"]) == 1
    assert cli.json("revision", latest)["revision"]["id"] == latest
    near = cli.json("neighborhood", "Supplier/S-1001", "--depth", "1")
    assert near
    far = cli.json("traverse", "Supplier/S-1001", "--path", "supplies")
    assert far
    assert cli.json("changes", "--limit", "1")["events"]
    assert cli.json("domains")["domains"][0]["name"] == "supply"
    assert cli.json("status")["status"] == "ok"


def test_schema_infer_diff_and_dry_run(cli: Cli, tmp_path: Path) -> None:
    """Onboarding: a change set inferred from a sample, its diff against main and the dry run of a
    change set; nothing is written."""
    sample = tmp_path / "carriers.csv"
    sample.write_text(
        "carrier_code,name,mode\n" + "".join(f"CR-{i:02d},Carrier {i},road\n" for i in range(12))
    )
    code, out, _ = cli("schema", "infer", str(sample))
    assert code == 0 and out.startswith("# A change set proposed")
    inferred = tmp_path / "carriers.yaml"
    inferred.write_text(out)
    diff = cli.json("schema", "diff", str(inferred))
    assert diff["added"] == ["Carrier"] and diff["removed"] == [] and diff["changed"] == []
    rename = tmp_path / "rename.json"
    rename.write_text(json.dumps([{"op": "rename_kind", "kind": "Plant", "to": "Site"}]))
    diff = cli.json("schema", "diff", str(rename))
    assert diff["renamed"]["kinds"] == {"Plant": "Site"} and "Site" in diff["added"]
    dry = cli.json("schema", "apply", str(inferred), "--dry-run")
    assert dry["status"] == "dry_run" and dry["valid"] is True
    assert cli.json("schema")["kinds"][0]["name"] != "Carrier"  # nothing applied
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"op": "rename_kind", "kind": "Nope", "to": "Site"}]))
    code, out, _ = cli("schema", "diff", str(bad))
    assert code == 1 and "unknown Kind 'Nope'" in out


def test_schema_apply_follows_its_job_until_it_commits_or_fails(
    cli: Cli, running: Running, tmp_path: Path
) -> None:
    """`schema apply` sends a change set with Prefer: respond-async and polls its job, printing its
    progress; a migration that fails exits as the synchronous call's problem would."""
    admin = {"Authorization": f"Bearer {running.admin_key}"}
    made = httpx.post(
        f"{running.url}/api/v1/domains/supply/branches", json={"name": "cli-jobs"}, headers=admin, timeout=30
    )
    assert made.status_code == 201, made.text
    change = tmp_path / "note.json"
    change.write_text(
        json.dumps(
            [
                {
                    "op": "add_attribute",
                    "kind": "Supplier",
                    "attribute": "cli_note",
                    "definition": {"type": "text"},
                }
            ]
        )
    )
    code, out, err = cli("schema", "apply", str(change), "--branch", "cli-jobs", "--json")
    assert code == 0, err
    answer = json.loads(out)
    assert answer["status"] == "committed" and answer["branch"] == "cli-jobs" and answer["revision"]
    jobs = cli.json("schema", "jobs", "--branch", "cli-jobs")["jobs"]
    assert jobs[0]["status"] == "committed" and jobs[0]["revision"] == answer["revision"]
    code, out, _ = cli("schema", "jobs", jobs[0]["id"])
    assert code == 0 and "committed" in out and jobs[0]["id"] in out
    failing = tmp_path / "failing.json"
    failing.write_text(
        json.dumps(
            [
                {
                    "op": "change_attribute",
                    "kind": "Supplier",
                    "attribute": "legal_name",
                    "definition": {"type": "integer"},
                }
            ]
        )
    )
    code, _, err = cli("schema", "apply", str(failing), "--branch", "cli-jobs")
    assert code == 1 and "job scj_" in err and "would not fit the new schema" in err, err


def test_exit_codes_and_problem_titles(cli: Cli, running: Running) -> None:
    code, _, err = cli("record", "get", "Supplier", "S-9999")
    assert code == 2 and "Not found" in err and "S-9999" in err

    code, _, err = cli("query", '{"kind": "Supplier", ')
    assert code == 1 and "not valid JSON" in err
    code, _, err = cli("record", "fetch", "Supplier", "S-1001")
    assert code == 1 and "invalid choice" in err
    code, _, err = cli("query", '{"kind": "Supplier", "where": {"attr": "nope", "op": "eq", "value": 1}}')
    assert code == 1 and "Unprocessable" in err

    code, _, err = cli("search", "Poznan", key="lbk_not-a-real-key")
    assert code == 4 and "Unauthenticated" in err
    code, _, err = cli("record", "get", "Supplier", "S-1001", key=running.part_viewer_key)
    assert code == 2  # a Kind outside a narrowed grant reads like an unknown one

    code, _, err = cli("status", url=f"http://127.0.0.1:{free_port()}")
    assert code == 5 and "cannot reach" in err

    stale = "0" * 64
    code, out, err = cli(
        "exec",
        "update_supplier",
        "-p",
        "key=S-1010",
        "-p",
        "risk_score:=40",
        "--expected-head",
        stale,
        "--json",
    )
    assert code == 3 and json.loads(out)["code"] == "stale-head" and "Conflict" in err
    code, _, err = cli(
        "exec", "flag_supplier_risk", "-p", "supplier=S-1010", "-p", "severity=critical", "-p", "reason=x"
    )
    assert code == 3 and "review" in err
    code, _, err = cli("exec", "update_supplier", "-p", "risk_score")
    assert code == 1 and "NAME=VALUE" in err


def test_writes_go_through_operations_and_proposals(cli: Cli, running: Running) -> None:
    agent = running.agent_key
    code, out, err = cli("exec", "update_supplier", "-p", "key=S-1020", "-p", "risk_score=61", key=agent)
    assert code == 3 and "review" in err  # an agent on the protected main branch needs a task
    dry = cli.json(
        "exec",
        "update_supplier",
        "-p",
        "key=S-1020",
        "-p",
        "risk_score:=61",
        "--dry-run",
        "--task",
        "cli-e2e",
        key=agent,
    )
    assert dry["status"] == "dry_run" and dry["valid"] is True
    proposed = cli.json(
        "exec",
        "update_supplier",
        "-p",
        "key=S-1020",
        "-p",
        "risk_score=61",
        "--task",
        "cli-e2e",
        "--intent",
        "Lower S-1020 after the CLI test audit",
        "--idempotency-key",
        "cli-e2e-s1020",
        key=agent,
    )
    assert proposed["status"] == "proposed"
    proposal = proposed["proposal"]["id"]
    listed = cli.json("proposals", "list", "--status", "open")
    assert proposal in [p["id"] for p in listed["proposals"]]
    code, out, _ = cli("proposals", "show", proposal)
    assert code == 0 and "Lower S-1020 after the CLI test audit" in out

    code, _, err = cli("proposals", "review", proposal, "--approve", key=agent)
    assert code == 4 and "Forbidden" in err
    code, _, err = cli("proposals", "review", proposal)
    assert code == 1 and "--approve" in err
    assert cli.json("proposals", "review", proposal, "--approve", "--comment", "ok")["approval"]["satisfied"]
    merged = cli.json("proposals", "merge", proposal)
    assert merged["status"] == "merged"
    assert cli.json("record", "get", "Supplier", "S-1020")["values"]["risk_score"] == "61"
    code, _, err = cli("proposals", "merge", proposal)
    assert code == 3

    created = cli.json("branches", "create", "cli-work", "--mode", "overlay")
    assert created["name"] == "cli-work"
    assert "cli-work" in [b["name"] for b in cli.json("branches", "list")["branches"]]
    assert cli.json("branches", "delete", "cli-work")["deleted"] is True
    code, _, _ = cli("branches", "show", "cli-work")
    assert code == 2


def test_import_in_batches_and_again(cli: Cli, tmp_path: Path) -> None:
    data = {
        "records": [
            {"kind": "Plant", "values": {"plant_code": f"PL-{n}", "name": f"Plant {n}"}}
            for n in range(50, 73)
        ]
    }
    path = tmp_path / "plants.json"
    path.write_text(json.dumps(data))
    summary = cli.json("import", str(path), "--batch-size", "10", "--source", "cli-test")
    assert summary["batches"] == 3 and summary["records"] == 23 and summary["changed"]["records"] == 23
    again = cli.json("import", str(path), "--batch-size", "10", "--source", "cli-test")
    assert again["revisions"] == summary["revisions"]  # each batch answered from its idempotency receipt
    assert cli.json("record", "get", "Plant", "PL-72")["values"]["name"] == "Plant 72"
    code, _, err = cli("import", str(tmp_path / "missing.json"))
    assert code == 1 and "cannot read" in err


def test_admin_commands(cli: Cli) -> None:
    assert cli.json("principals", "create", "usr_cli", "--name", "CLI")["id"] == "usr_cli"
    key = cli.json("keys", "create", "usr_cli")
    grant = cli.json("grants", "create", "--principal", "usr_cli", "--role", "viewer", "--kinds", "Plant")
    assert grant["kinds"] == ["Plant"]
    # The example's Plants ("Corvane Gdansk Assembly", ...): this test does not lean on the Plants
    # another test imports (run alone, or first, it found none).
    assert cli.json("search", "Corvane", "--kind", "Plant", key=key["key"])["results"]
    assert cli.json("grants", "delete", grant["id"])["deleted"] is True
    assert cli.json("keys", "revoke", "usr_cli", key["id"])["revoked_at"]
    code, _, _ = cli("search", "Plant", key=key["key"])
    assert code == 4


def test_tags_name_revisions_for_reads(cli: Cli) -> None:
    history = cli.json("record", "history", "Supplier", "S-1001")
    first = history["changes"][-1]["revision"]
    created = cli.json("tags", "create", "cli/imported", first[:12])
    assert created["revision"] == first and created["name"] == "cli/imported"
    assert "cli/imported" in [t["name"] for t in cli.json("tags", "list")["tags"]]
    code, out, _ = cli("tags", "show", "cli/imported")
    assert code == 0 and first in out
    at_tag = cli.json("record", "lineage", "Supplier", "S-1001", "--at", "cli/imported")
    assert at_tag == cli.json("record", "lineage", "Supplier", "S-1001", "--at", first)
    assert cli.json("tags", "delete", "cli/imported")["deleted"] is True
    code, _, err = cli("record", "lineage", "Supplier", "S-1001", "--at", "cli/imported")
    assert code == 2 and "cli/imported" in err  # a deleted tag reads like an unknown Revision


def test_sessions_list_and_show(cli: Cli, running: Running) -> None:
    import httpx

    headers = {"Authorization": f"Bearer {running.agent_key}", "Lorebase-Session": "s-cli"}
    with httpx.Client(base_url=running.url, trust_env=False) as http:
        assert http.get("/api/v1/domains/supply/kinds/Supplier/records/S-1001", headers=headers).is_success
    assert cli("sessions", "note", "s-cli", "looked at S-1001", key=running.agent_key)[0] == 0
    code, out, _ = cli("sessions", "show", "s-cli", key=running.agent_key)
    lines = out.splitlines()
    assert code == 0 and lines[0].split() == ["AT", "KIND", "CALL", "STATUS", "TEXT"]
    assert lines[1].split()[1:4] == ["step", "GetRecord", "200"]  # the call, not "-"
    listed = cli.json("sessions", "list", key=running.agent_key)
    assert [s["session"] for s in listed["sessions"]] == ["s-cli"] and listed["sessions"][0]["steps"] == 1
    code, out, _ = cli("sessions", "list", "--principal", "agt_e2e")
    assert code == 0 and "s-cli" in out and out.splitlines()[0].split()[:2] == ["SESSION", "PRINCIPAL"]
    assert cli("sessions", "show")[0] == 1  # show needs SESSION (USAGE)


def test_the_entry_point_and_events_follow(running: Running) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "lorebase", "record", "get", "Supplier", "S-9999"],
        env=running.env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "Not found" in done.stderr and "Traceback" not in done.stderr

    with subprocess.Popen(
        [sys.executable, "-m", "lorebase", "events", "--follow", "--json", "--kinds", "Supplier"],
        env=running.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as follower:
        try:
            assert follower.stdout is not None
            line = _first_line_after_writes(follower.stdout, running)
            event = json.loads(line)
            assert event["type"] == "revision.committed" and event["keys"] == {"Supplier": ["S-1030"]}
            follower.send_signal(signal.SIGINT)
            _, err = follower.communicate(timeout=20)
            assert follower.returncode == 0 and "Traceback" not in err
        finally:
            if follower.poll() is None:
                follower.kill()


def _first_line_after_writes(stream: IO[str], running: Running) -> str:
    """The stream starts with the next commit: write until the follower prints one."""
    with selectors.DefaultSelector() as selector:
        selector.register(stream, selectors.EVENT_READ)
        for attempt in range(20):
            subprocess.run(
                [sys.executable, "-m", "lorebase", "exec", "update_supplier", "-p", "key=S-1030"]
                + ["-p", f"risk_score={10 + attempt}"],
                env=running.env(),
                capture_output=True,
                timeout=60,
                check=True,
            )
            if selector.select(timeout=3):
                return stream.readline()
    raise AssertionError("lorebase events printed nothing after 20 commits")
