"""Problems across gRPC: a status code plus the problem document in trailing metadata.

Every servicer of every service answers its failures one way (`problems_as_status`, and the
`problem_rpc` decorator built on it): a `Problem` becomes its gRPC status with the problem document;
any other exception is logged once, with its traceback, and answered as a 500 problem that names
no detail of it. The clients turn the error back into the same `Problem` with `problem_from_error`,
so the gateway answers exactly what keeper, feed or scribe decided.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any, NoReturn, TypeVar

import grpc
import orjson

from lorebase.problems import Problem, StoreUnavailable

PROBLEM_KEY = "lorebase-problem-bin"

_CODES = {
    400: grpc.StatusCode.INVALID_ARGUMENT,
    401: grpc.StatusCode.UNAUTHENTICATED,
    403: grpc.StatusCode.PERMISSION_DENIED,
    404: grpc.StatusCode.NOT_FOUND,
    409: grpc.StatusCode.ABORTED,
    412: grpc.StatusCode.FAILED_PRECONDITION,
    413: grpc.StatusCode.RESOURCE_EXHAUSTED,
    422: grpc.StatusCode.INVALID_ARGUMENT,
    429: grpc.StatusCode.RESOURCE_EXHAUSTED,
    503: grpc.StatusCode.UNAVAILABLE,
}

_STATUSES = {
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.UNAUTHENTICATED: 401,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.ALREADY_EXISTS: 409,
    grpc.StatusCode.ABORTED: 409,
    grpc.StatusCode.FAILED_PRECONDITION: 412,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 413,
    grpc.StatusCode.UNAVAILABLE: 503,
}


async def abort_with_problem(context: grpc.aio.ServicerContext, problem: Problem) -> NoReturn:
    """End the call with the problem's status, the document in the trailing metadata."""
    context.set_trailing_metadata(((PROBLEM_KEY, problem.to_json()),))
    await context.abort(_CODES.get(problem.status, grpc.StatusCode.INTERNAL), problem.detail)
    raise AssertionError("ServicerContext.abort returned")  # it raises grpc.aio.AbortError


class _ProblemsAsStatus:
    """The context manager of `problems_as_status`. It never swallows an exception: it replaces a
    failure with the abort that answers it, and lets cancellation (and an abort) pass."""

    def __init__(self, context: grpc.aio.ServicerContext, service: str, call: str) -> None:
        self.context = context
        self.service = service
        self.call = call

    async def __aenter__(self) -> None:
        return None

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if not isinstance(error, Exception) or isinstance(error, grpc.aio.AbortError):
            return  # success, cancellation, or a call aborted already
        if isinstance(error, Problem):
            await abort_with_problem(self.context, error)
        if isinstance(error, StoreUnavailable):  # PostgreSQL restarting: worth a retry, not a 500
            logging.getLogger(f"lorebase.{self.service}").warning(
                "%s %s: the store is unavailable (%s)", self.service, self.call, type(error).__name__
            )
            await abort_with_problem(
                self.context,
                Problem(
                    503, "unavailable", "the store is unavailable (restarting?); retry shortly", retry_after=1
                ),
            )
        logging.getLogger(f"lorebase.{self.service}").error(
            "%s %s failed", self.service, self.call, exc_info=error
        )
        await abort_with_problem(
            self.context,
            Problem(500, "internal", f"{self.service} failed to answer; the error is in its log"),
        )


def problems_as_status(context: grpc.aio.ServicerContext, service: str, call: str) -> _ProblemsAsStatus:
    """`async with problems_as_status(context, "feed", "Events"):` answers what the block raises:
    a Problem as its status and document, anything else as a 500 problem, logged once with its
    traceback. For a part of a call (a stream's set-up) or a decorator's body; `problem_rpc` wraps
    a whole unary method."""
    return _ProblemsAsStatus(context, service, call)


Method = TypeVar("Method", bound=Callable[..., Awaitable[Any]])


def problem_rpc(service: str) -> Callable[[Method], Method]:
    """Decorate a unary servicer method `(self, request, context)` of `service` (keeper, feed,
    scribe): its failures are answered by `problems_as_status`."""

    def decorate(method: Method) -> Method:
        @functools.wraps(method)
        async def answered(self: Any, request: Any, context: grpc.aio.ServicerContext) -> Any:
            async with problems_as_status(context, service, method.__name__):
                return await method(self, request, context)

        return answered  # type: ignore[return-value]

    return decorate


def problem_from_error(error: grpc.aio.AioRpcError, service: str) -> Problem:
    for key, value in error.trailing_metadata() or ():
        if key == PROBLEM_KEY:
            return Problem.from_document(orjson.loads(value))
    code = error.code()
    status = _STATUSES.get(code, 502)
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
        return Problem(503, "unavailable", f"{service} did not answer ({code.name}); retry shortly")
    return Problem(status, "upstream", f"{service} failed: {code.name}: {error.details()}")


__all__ = [
    "PROBLEM_KEY",
    "abort_with_problem",
    "problem_from_error",
    "problem_rpc",
    "problems_as_status",
]
