"""A process agent for the supply example: a chat model behind any OpenAI-compatible endpoint
(default http://127.0.0.1:11434/v1, Ollama) works a task through Herald's tools.

    LOREBASE_KEY=lbk_... python examples/agent/agent.py poznan-risk
    python examples/agent/agent.py --prompt "..." --task my-task --model qwen2.5

It starts Herald (`lorebase herald` over stdio, with this process's LOREBASE_URL and LOREBASE_KEY)
or joins one over HTTP (--herald-url, sending LOREBASE_KEY as the Authorization header). It writes
only through Operations and Proposals: every lorebase_execute that writes carries the task and an
intent (so Keeper opens a Proposal that a person reviews), never auto_merge; the model gets no other
way to write. It prints the final answer, or with --json a transcript of the tool calls.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any

import httpx
from mcp import Client, StdioServerParameters

DEFAULT_BASE_URL = "http://127.0.0.1:11434/v1"


@dataclass(frozen=True)
class Task:
    slug: str
    prompt: str


TASKS = {
    "poznan-risk": Task(
        "poznan-risk-review",
        "Review the risk of suppliers in Poznan. Resolve the words first, query the Suppliers located "
        "in Poznan with their risk_score, take a context pack with the supplier_risk lens for each, and "
        "explain any risk_score of 80 or more. For every such Supplier without an open risk flag, raise "
        "one with flag_supplier_risk (severity high, a reason naming the evidence): dry run first, then "
        "write. Finish with a short report naming the Suppliers, their scores and what you flagged.",
    ),
    "late-deliveries": Task(
        "late-deliveries",
        "Flag suppliers with late deliveries. Find the PurchaseOrders still open that were ordered more "
        "than 60 days ago, follow each to its Part and the Part's Suppliers (for_part, supplied_by), "
        "and raise a risk flag with flag_supplier_risk (severity medium, the late orders as the reason) "
        "on each Supplier concerned: dry run first, then write. Finish with a short report.",
    ),
}

RULES = """\
You are an agent working on the Lorebase Domain {domain} through tools. Facts come only from tool
answers: never invent keys or values. Write only with lorebase_execute: dry run first (dry_run true),
then the same call with dry_run false; your writes become a Proposal that a person reviews. Keep tool
arguments to the members their schema lists. When you are done, answer with a short report and no
tool call.
"""


@dataclass
class Transcript:
    task: str
    calls: list[dict[str, Any]] = field(default_factory=list)
    answer: str = ""
    steps: int = 0


class ChatEndpoint:
    """An OpenAI-compatible `POST /chat/completions`, with tool calling."""

    def __init__(self, base_url: str, model: str, api_key: str, timeout_s: float) -> None:
        self.model = model
        self.http = httpx.AsyncClient(
            base_url=base_url.rstrip("/"),
            headers={"Authorization": f"Bearer {api_key}"},
            timeout=timeout_s,
            trust_env=False,
        )

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        response = await self.http.post(
            "/chat/completions",
            json={"model": self.model, "messages": messages, "tools": tools, "tool_choice": "auto"},
        )
        if response.status_code >= 400:
            raise RuntimeError(f"the chat endpoint answered {response.status_code}: {response.text[:300]}")
        message: dict[str, Any] = response.json()["choices"][0]["message"]
        return message

    async def close(self) -> None:
        await self.http.aclose()


def guarded(name: str, arguments: dict[str, Any], task: Task) -> dict[str, Any]:
    """The write policy: a write names the task and an intent and never merges by itself."""
    if name != "lorebase_execute":
        return arguments
    arguments = dict(arguments)
    arguments.pop("auto_merge", None)
    arguments["task"] = task.slug  # dry runs too: an agent on a protected branch runs on its task branch
    arguments.setdefault("intent", task.prompt.split(". ")[0] + ".")
    return arguments


def tool_specs(tools: Any) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description or "", "parameters": t.input_schema},
        }
        for t in tools.tools
    ]


async def connect(stack: AsyncExitStack, args: argparse.Namespace) -> Client:
    key = os.environ.get("LOREBASE_KEY", "")
    if not key:
        raise SystemExit("agent: set LOREBASE_KEY (the agent's own key; Herald forwards it)")
    if args.herald_url:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        http = await stack.enter_async_context(httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}))
        server: Any = streamable_http_client(args.herald_url, http_client=http)
    else:
        env = {
            "LOREBASE_URL": os.environ.get("LOREBASE_URL", "http://127.0.0.1:8080"),
            "LOREBASE_KEY": key,
            "LOREBASE_DOMAIN": args.domain,
        }
        server = StdioServerParameters(command=sys.executable, args=["-m", "lorebase", "herald"], env=env)
    return await stack.enter_async_context(Client(server))


async def run(args: argparse.Namespace, task: Task) -> Transcript:
    transcript = Transcript(task=task.slug)
    chat = ChatEndpoint(args.base_url, args.model, args.api_key, args.timeout)
    async with AsyncExitStack() as stack:
        stack.push_async_callback(chat.close)
        herald = await connect(stack, args)
        listed = await herald.list_tools()
        tools = tool_specs(listed)
        names = {t.name for t in listed.tools}
        messages: list[dict[str, Any]] = [
            {
                "role": "system",
                "content": RULES.format(domain=args.domain) + "\n" + (herald.instructions or ""),
            },
            {"role": "user", "content": task.prompt},
        ]
        for step in range(1, args.max_steps + 1):
            transcript.steps = step
            message = await chat.complete(messages, tools)
            calls = message.get("tool_calls") or []
            messages.append(
                {
                    "role": "assistant",
                    "content": message.get("content") or "",
                    **({"tool_calls": calls} if calls else {}),
                }
            )
            if not calls:
                transcript.answer = message.get("content") or ""
                return transcript
            for call in calls:
                name = call["function"]["name"]
                try:
                    arguments = json.loads(call["function"].get("arguments") or "{}")
                except json.JSONDecodeError as exc:
                    result_text, is_error = f"the arguments are not JSON: {exc}", True
                    arguments = {}
                else:
                    if name not in names or not isinstance(arguments, dict):
                        result_text, is_error = f"no tool {name!r}; use one of {sorted(names)}", True
                    else:
                        arguments = guarded(name, arguments, task)
                        result = await herald.call_tool(name, arguments)
                        result_text = "\n".join(getattr(c, "text", "") for c in result.content)
                        is_error = bool(result.is_error)
                transcript.calls.append({"tool": name, "arguments": arguments, "error": is_error})
                messages.append(
                    {"role": "tool", "tool_call_id": call.get("id", name), "content": result_text}
                )
        transcript.answer = f"stopped after {args.max_steps} steps without a final answer"
    return transcript


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("task", nargs="?", choices=sorted(TASKS), help="a ready-made supply task")
    parser.add_argument("--prompt", help="a task of your own, in words (with --task)")
    parser.add_argument("--task", dest="slug", help="the task slug of --prompt (the Proposal's task)")
    parser.add_argument("--base-url", default=os.environ.get("OPENAI_BASE_URL", DEFAULT_BASE_URL))
    parser.add_argument("--model", default=os.environ.get("LOREBASE_AGENT_MODEL", "llama3.1"))
    parser.add_argument("--api-key", default=os.environ.get("OPENAI_API_KEY", "ollama"))
    parser.add_argument("--domain", default=os.environ.get("LOREBASE_DOMAIN", "supply"))
    parser.add_argument("--herald-url", help="join Herald over streamable HTTP instead of starting it")
    parser.add_argument("--max-steps", type=int, default=16)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per model answer")
    parser.add_argument("--json", action="store_true", help="print the transcript as JSON")
    args = parser.parse_args(argv)
    if args.prompt:
        if not args.slug:
            parser.error("--prompt needs --task SLUG")
        task = Task(args.slug, args.prompt)
    elif args.task:
        task = TASKS[args.task]
    else:
        parser.error(f"name a task ({', '.join(sorted(TASKS))}) or give --prompt and --task")
    try:
        transcript = asyncio.run(run(args, task))
    except (httpx.HTTPError, RuntimeError, OSError) as exc:
        print(f"agent: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(transcript.__dict__, indent=2, ensure_ascii=False))
    else:
        for call in transcript.calls:
            print(f"- {call['tool']} {json.dumps(call['arguments'], ensure_ascii=False)}", file=sys.stderr)
        print(transcript.answer)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
