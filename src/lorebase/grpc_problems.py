"""Problems across gRPC: a status code plus the problem document in trailing metadata.

The server side aborts with `abort_with_problem`; the clients turn the error back into the same
`Problem` with `problem_from_error`, so the gateway answers exactly what keeper decided.
"""

from __future__ import annotations

import grpc
import orjson

from lorebase.problems import Problem

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


async def abort_with_problem(context: grpc.aio.ServicerContext, problem: Problem) -> None:
    context.set_trailing_metadata(((PROBLEM_KEY, problem.to_json()),))
    await context.abort(_CODES.get(problem.status, grpc.StatusCode.INTERNAL), problem.detail)


def problem_from_error(error: grpc.aio.AioRpcError, service: str) -> Problem:
    for key, value in error.trailing_metadata() or ():
        if key == PROBLEM_KEY:
            return Problem.from_document(orjson.loads(value))
    code = error.code()
    status = _STATUSES.get(code, 502)
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
        return Problem(503, "unavailable", f"{service} did not answer ({code.name}); retry shortly")
    return Problem(status, "upstream", f"{service} failed: {code.name}: {error.details()}")


__all__ = ["PROBLEM_KEY", "abort_with_problem", "problem_from_error"]
