"""What every route answers with: problem details, answers with their Revision and ETag, and the
wrapper that turns a route's problems (and its failures) into answers.

An unexpected failure in a route answers 500 problem details like any problem, on a connection
that stays open; its traceback is logged at most once per LOG_EVERY_S per route (the others are
counted), so a client that can make the gateway fail cannot flood its log.
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response

from lorebase.clients import Answer
from lorebase.clients._channel import SESSION
from lorebase.problems import Problem
from lorebase_gateway.address_limits import AddressLimits

PROBLEM_TYPE = "application/problem+json"
LOG_EVERY_S = 10.0
WWW_AUTHENTICATE = 'Bearer realm="lorebase"'
_SESSION = re.compile(r"[\x21-\x7e]{1,128}")  # keeper checks the id's grammar; gRPC metadata needs ASCII

logger = logging.getLogger("lorebase.gateway")

Route = Callable[[Request], Awaitable[Response]]


def problem_response(problem: Problem) -> Response:
    headers = {}
    if problem.status in (429, 503) and isinstance(problem.extra.get("retry_after"), int):
        headers["Retry-After"] = str(problem.extra["retry_after"])
    if problem.status == 401:  # RFC 6750: how to authenticate (a bearer key, or an OIDC token)
        headers["WWW-Authenticate"] = WWW_AUTHENTICATE
    return Response(problem.to_json(), status_code=problem.status, media_type=PROBLEM_TYPE, headers=headers)


def answer_response(request: Request, answer: Answer, *, etag: bool = False) -> Response:
    headers = dict(answer.headers)
    if answer.revision:
        headers["Lorebase-Revision"] = answer.revision
    tag = headers.get("ETag")  # keeper's own (head Revision + request digest), else one from the body
    if tag is None and etag and answer.status == 200:
        tag = f'"{answer.revision or "empty"}.{hashlib.sha256(answer.body).hexdigest()[:16]}"'
        headers["ETag"] = tag
    if tag is not None and tag in [t.strip() for t in request.headers.get("if-none-match", "").split(",")]:
        return Response(status_code=304, headers=headers)
    if answer.status == 204:  # No Content: no body, no media type
        return Response(status_code=204, headers=headers)
    return Response(answer.body, status_code=answer.status, media_type=answer.content_type, headers=headers)


class _Failures:
    """When each route last logged a traceback, and how many failures it has not logged since."""

    def __init__(self) -> None:
        self.logged: dict[str, float] = {}
        self.unlogged: dict[str, int] = {}

    def log(self, name: str) -> None:
        now = time.monotonic()
        if now - self.logged.get(name, -LOG_EVERY_S) >= LOG_EVERY_S:
            skipped = self.unlogged.pop(name, 0)
            logger.exception("route %s failed (%d more failures since the last traceback)", name, skipped)
            self.logged[name] = now
        else:
            self.unlogged[name] = self.unlogged.get(name, 0) + 1


_FAILURES = _Failures()


def handled(route: Route, *, no_store: bool = False, limited: bool = True) -> Route:
    """Turn every Problem a route raises, and any failure, into a problem-details answer; refuse the
    request first when its address has spent its allowance of requests without a valid credential
    (unless not `limited`: the gateway's own /health answers whatever the address did).
    `no_store`: every answer carries Cache-Control: no-store."""

    async def wrapper(request: Request) -> Response:
        session = request.headers.get("lorebase-session") or None
        token = SESSION.set(session if session is None or _SESSION.fullmatch(session) else None)
        limits: AddressLimits | None = request.app.state.gateway.address_limits if limited else None
        refused: Problem | None = None
        try:
            if limits is not None:
                limits.admit(request)
            if session is not None and _SESSION.fullmatch(session) is None:
                raise Problem(
                    400, "invalid-session", "Lorebase-Session is printable ASCII, at most 128 characters"
                )
            response = await route(request)
        except Problem as problem:
            refused = problem
            response = problem_response(problem)
        except Exception:
            _FAILURES.log(route.__name__)
            response = problem_response(
                Problem(500, "internal", "the gateway failed; the error is in its log")
            )
        finally:
            SESSION.reset(token)
        if limits is not None:
            limits.observe(request, response.status_code, refused)
        if no_store:
            response.headers["Cache-Control"] = "no-store"
        return response

    wrapper.__name__ = route.__name__
    return wrapper


__all__ = ["PROBLEM_TYPE", "Route", "answer_response", "handled", "problem_response"]
