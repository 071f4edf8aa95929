"""The example agent (examples/agent) as a process, against a scripted OpenAI-compatible chat server
started here (no model weights): the tool calls it makes through Herald, what it feeds back to the
model, and that its write arrives as a Proposal for a person to review, not on main."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.running import Running

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

AGENT = Path(__file__).resolve().parents[2] / "examples" / "agent" / "agent.py"
FLAG = {
    "supplier": "S-1001",
    "severity": "high",
    "reason": "risk_score 90, the highest in Poznan (agent test)",
}


def _call(n: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"call_{n}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


# What the "model" answers, turn by turn: the Poznan review of the seed's agent guide.
SCRIPT: list[dict[str, Any]] = [
    {"tool_calls": [_call(1, "lorebase_resolve", {"text": "suppliers in Poznan"})]},
    {
        "tool_calls": [
            _call(
                2,
                "lorebase_query",
                {
                    "kind": "Supplier",
                    "where": {"attr": "city", "op": "eq", "value": "Poznan"},
                    "select": ["legal_name", "risk_score"],
                },
            )
        ]
    },
    {
        "tool_calls": [
            _call(3, "lorebase_context", {"refs": ["Supplier/S-1001"], "lens": "supplier_risk"}),
            _call(4, "lorebase_explain", {"kind": "Supplier", "key": "S-1001"}),
        ]
    },
    {"tool_calls": [_call(5, "lorebase_execute", {"operation": "flag_supplier_risk", "parameters": FLAG})]},
    {
        "tool_calls": [
            _call(
                6,
                "lorebase_execute",
                {"operation": "flag_supplier_risk", "parameters": FLAG, "dry_run": False, "auto_merge": True},
            )
        ]
    },
    {"content": "S-1001 Kavsen Alloys (risk 90) is the Poznan supplier; flagged high, Proposal opened."},
]


class ScriptedChat(ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[dict[str, Any]] = []

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _Handler(BaseHTTPRequestHandler):
    server: ScriptedChat

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path != "/v1/chat/completions" or len(self.server.requests) >= len(SCRIPT):
            self.send_error(400, "unexpected request")
            return
        turn = SCRIPT[len(self.server.requests)]
        self.server.requests.append(body)
        message = {
            "role": "assistant",
            "content": turn.get("content"),
            **({"tool_calls": turn["tool_calls"]} if "tool_calls" in turn else {}),
        }
        answer = json.dumps(
            {
                "id": f"chatcmpl-{len(self.server.requests)}",
                "object": "chat.completion",
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": message,
                        "finish_reason": "tool_calls" if "tool_calls" in turn else "stop",
                    }
                ],
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def chat() -> Iterator[ScriptedChat]:
    server = ScriptedChat()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def _tool_messages(request: dict[str, Any]) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in request["messages"] if m["role"] == "tool"}


def test_the_agent_reviews_poznan_and_writes_a_proposal(running: Running, chat: ScriptedChat) -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(AGENT),
            "poznan-risk",
            "--json",
            "--base-url",
            chat.base_url,
            "--model",
            "scripted",
        ],
        env=running.env(running.agent_key),
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    transcript = json.loads(done.stdout)

    # The tool calls, in order, as Herald received them.
    assert [c["tool"] for c in transcript["calls"]] == [
        "lorebase_resolve",
        "lorebase_query",
        "lorebase_context",
        "lorebase_explain",
        "lorebase_execute",
        "lorebase_execute",
    ]
    assert not any(c["error"] for c in transcript["calls"]), transcript
    for write in transcript["calls"][4:]:
        assert write["arguments"]["task"] == "poznan-risk-review" and "auto_merge" not in write["arguments"]
    assert transcript["answer"].startswith("S-1001 Kavsen Alloys")

    # What the model was sent: the tools with their schemas, the task, then each tool's answer.
    first = chat.requests[0]
    assert {t["function"]["name"] for t in first["tools"]} >= {"lorebase_context", "lorebase_execute"}
    assert (
        first["messages"][0]["role"] == "system"
        and "Review the risk of suppliers in Poznan" in first["messages"][1]["content"]
    )
    assert '"value":"Poznan"' in _tool_messages(chat.requests[1])["call_1"]
    fed = _tool_messages(chat.requests[3])
    assert fed["call_3"].startswith("# Context: supply/main") and fed["call_4"].startswith("# Explain:")
    dry = json.loads(_tool_messages(chat.requests[4])["call_5"])
    assert dry["status"] == "dry_run" and dry["valid"] is True
    proposed = json.loads(_tool_messages(chat.requests[5])["call_6"])
    assert proposed["status"] == "proposed" and proposed["merge"]["performed"] is False

    # The write is a Proposal waiting for review; main is unchanged.
    admin = {"Authorization": f"Bearer {running.admin_key}"}
    with httpx.Client(base_url=running.url, headers=admin, trust_env=False, timeout=30) as http:
        proposal = http.get(f"/api/v1/domains/supply/proposals/{proposed['proposal']['id']}").json()
        assert proposal["status"] == "open" and proposal["author"] == "agt_e2e"
        assert proposal["task"] == "poznan-risk-review" and proposal["target_ref"] == "main"
        assert [e["operation"] for e in proposal["executions"]] == ["flag_supplier_risk"]
        on_main = http.get("/api/v1/domains/supply/kinds/RiskFlag/records/RF-S-1001-high")
        assert on_main.status_code == 404 or on_main.json()["values"].get("reason") != FLAG["reason"]
