"""Problem details (RFC 9457): the one error type every layer raises and every surface renders.

`type` ends in the seed's code (`review-required`, `stale-head`, ...); extra members (`branch`,
`operation`, `reason`, `next`, `issues`, ...) travel beside the standard ones.
"""

from __future__ import annotations

from typing import Any

import orjson

TYPE_BASE = "https://lorebase.dev/problems/"

_TITLES = {
    400: "Bad request",
    401: "Unauthenticated",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    408: "Request timeout",
    409: "Conflict",
    412: "Precondition failed",
    413: "Request too large",
    415: "Unsupported media type",
    422: "Unprocessable request",
    429: "Too many requests",
    431: "Request header fields too large",
    500: "Internal error",
    503: "Unavailable",
}


class Problem(Exception):
    """An answer that is not a success: HTTP status, a code, what to change, and extra members."""

    def __init__(
        self, status: int, code: str, detail: str, *, title: str | None = None, **extra: Any
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.code = code
        self.detail = detail
        self.title = title or _TITLES.get(status, "Error")
        self.extra = extra

    def document(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "type": TYPE_BASE + self.code,
            "title": self.title,
            "status": self.status,
            "detail": self.detail,
            "code": self.code,
        }
        doc.update(self.extra)
        return doc

    def to_json(self) -> bytes:
        return orjson.dumps(self.document())

    @classmethod
    def from_document(cls, doc: dict[str, Any]) -> Problem:
        known = {"type", "title", "status", "detail", "code"}
        code = str(doc.get("code") or str(doc.get("type", "")).rsplit("/", 1)[-1] or "error")
        extra = {k: v for k, v in doc.items() if k not in known}
        return cls(
            int(doc.get("status", 500)), code, str(doc.get("detail", "")), title=doc.get("title"), **extra
        )


def not_found(what: str, name: str, **extra: Any) -> Problem:
    return Problem(404, "not-found", f"unknown {what} {name!r}", **extra)


MAX_ISSUES = 100


def invalid(issues: list[dict[str, Any]], detail: str | None = None) -> Problem:
    """422 with the issues listed by path, rule and message (the first MAX_ISSUES, and how many)."""
    first = "; ".join(f"{i['path']}: {i['message']}" for i in issues[:3])
    more = f" (and {len(issues) - 3} more)" if len(issues) > 3 else ""
    extra: dict[str, Any] = {"issues": issues[:MAX_ISSUES]}
    if len(issues) > MAX_ISSUES:
        extra.update(issue_count=len(issues), issues_truncated=True)
    return Problem(422, "validation-failed", detail or f"{first}{more}", **extra)


class StoreUnavailable(Exception):
    """PostgreSQL cannot be reached now (restarting, shutting down, the connection lost): raised by
    the storage layer in place of the driver's error (lorebase_store.db), answered 503 with
    Retry-After by every service (lorebase.grpc_problems), since the call may succeed shortly."""


__all__ = ["MAX_ISSUES", "TYPE_BASE", "Problem", "StoreUnavailable", "invalid", "not_found"]
