"""An endpoint of the REST surface, declared once.

An `Endpoint` says everything about one route: its method and path, the service and RPC it calls,
its typed request (a msgspec Struct whose fields say where each value comes from: the path, the
query string, a header or the JSON body), what it answers, the problems it may answer, the
policy that keeper enforces before any handler runs (lorebase.contract.policy), and its
documentation. From the declarations come the gateway's routes
(lorebase_gateway.routes), the gRPC message of each call, the REST client's routes, the parity test
and the OpenAPI document (lorebase.contract.openapi); adding an endpoint is one declaration here,
one keeper handler and a test.

Where a value comes from is said with `Annotated`:

    class GetRecord(Request):
        domain: Annotated[DomainName, Path]
        kind: Annotated[Name, Path]
        branch: Annotated[BranchRef, Query] = ""
        links: Annotated[bool, Query] = False

A field named `body` is the JSON body: its type is a Struct (or `dict[str, Any]` for a document
whose shape the schema decides). A field that travels under another name says so with
`Query("from")` or `Header("Idempotency-Key")`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, get_args, get_origin, get_type_hints

import msgspec

from lorebase.contract.policy import Policy

# The reply header by which keeper tells the gateway where the Revision of a read answer stands on
# its branch: "<lineage>.<generation>", lineage an opaque digest of the Domain, branch and the
# branch's creation. The gateway's read cache orders Revisions by it (lorebase_gateway.read_cache)
# and never passes it on to clients.
READ_ORDER_HEADER = "lorebase-read-order"
# The reply header by which keeper tells the gateway of Revisions committed outside any request
# through it (a schema change job's commit, named by a read of the job): comma-separated Revision
# ids. The gateway drops its cached reads the first time it hears of each, as a write through it
# does (lorebase_gateway.read_cache), and never passes it on to clients.
COMMITTED_HEADER = "lorebase-committed"


@dataclass(frozen=True)
class In:
    """Where a request field comes from, and its name there (default: the field's name)."""

    where: str  # path | query | header
    alias: str = ""

    def __call__(self, alias: str) -> In:
        return In(self.where, alias)


Path = In("path")
Query = In("query")
Header = In("header")


class Request(msgspec.Struct, frozen=True, kw_only=True):
    """The typed request of an endpoint: its parameters and, as `body`, its JSON body."""


@dataclass(frozen=True)
class Parameter:
    """One parameter of a request, found from its Struct's annotations."""

    name: str  # the field
    where: str  # path | query | header
    alias: str  # its name in the path template, the query string or the header
    type: Any
    required: bool


def _parameters(model: type[Request]) -> tuple[tuple[Parameter, ...], Any]:
    """The parameters of a request model and the type of its body (None: no body)."""
    hints = get_type_hints(model, include_extras=True)
    info = msgspec.structs.fields(model)
    params: list[Parameter] = []
    body: Any = None
    for f in info:
        hint = hints[f.name]
        if f.name == "body":
            body = hint
            continue
        if get_origin(hint) is not Annotated:
            raise TypeError(f"{model.__name__}.{f.name}: say where it comes from (Path, Query or Header)")
        base, *extras = get_args(hint)
        where = next(e for e in extras if isinstance(e, In))
        params.append(Parameter(f.name, where.where, where.alias or f.name, hint, f.required))
    return tuple(params), body


@dataclass(frozen=True, eq=False)
class Endpoint:
    """One REST endpoint (see the module docstring). Compared and hashed by identity: each is
    declared once, and the caches keyed by it (its RPC, its decoding plan) stay valid."""

    name: str  # the operationId, the REST client method and the CLI/Herald parity name
    method: str
    path: str  # the gateway's template: `{branch:path}` for a branch name that may hold '/'
    service: str  # keeper | feed | memory_store | memory_journal | gateway
    rpc: str  # the RPC of that service ("" for the gateway's own endpoints)
    request: type[Request]
    summary: str
    tag: str
    # Who may call it, on which branch, and which data it reaches: enforced by keeper before its
    # handler runs (lorebase.contract.policy, lorebase_keeper.access.policy). Every endpoint has one.
    policy: Policy = field(kw_only=True)
    description: str = ""
    success: int = 200
    problems: tuple[int, ...] = ()  # besides the common ones (lorebase.contract.problems)
    etag: bool = False  # a cacheable read: ETag, If-None-Match, 304
    # A read of one Revision the gateway may answer from its own cache, without asking keeper, when
    # the client opts into bounded staleness (Cache-Control: max-stale; lorebase_gateway.read_cache).
    read_cache: bool = False
    body_limit: str = "http.max_body_bytes"  # the setting that bounds its body
    bulk: bool = False  # the call gets services.bulk_deadline_s
    no_store: bool = False  # Cache-Control: no-store (memory)
    body_optional: bool = False  # an empty body reads as {}
    invalid_status: int = 422  # the status of a body that does not fit its model (memory: 400)
    strict_query: bool = False  # a query parameter it does not declare answers 400 (else it is ignored)
    media_types: tuple[str, ...] = ("application/json",)  # what it may answer with on success
    response: Any = None  # the response model of the success document (lorebase.contract.answers)
    example: Any = None  # an example response document (the seed's, where it gives one)
    request_example: Any = None  # an example body (the seed's, where it gives one)
    # Other answers it documents beside `success` and the problems: (status, model), e.g. the 202 of
    # an agent task write or the 503 of /health (which is not problem details).
    other_answers: tuple[tuple[int, Any], ...] = ()
    # What keeper and the gateway do around the call: counted in the writes class of the rate limits
    # (None: every method but GET), clearing the gateway's read cache after it succeeds (it takes
    # away what a cached answer may show), kept as a step of the caller's agent session.
    writes: bool | None = None
    clears_cache: bool = False
    traced: bool = True
    parameters: tuple[Parameter, ...] = field(init=False)
    body: Any = field(init=False)

    def __post_init__(self) -> None:
        if self.writes is None:
            object.__setattr__(self, "writes", self.method != "GET")
        parameters, body = _parameters(self.request)
        object.__setattr__(self, "parameters", parameters)
        object.__setattr__(self, "body", body)
        template = {p.alias for p in parameters if p.where == "path"}
        named = {part.strip("{}").split(":")[0] for part in self.path.split("/") if part.startswith("{")}
        if template != named:
            raise TypeError(
                f"{self.name}: path parameters {sorted(named)} but the model has {sorted(template)}"
            )

    @property
    def openapi_path(self) -> str:
        """The path as OpenAPI writes it (`{branch}`, not `{branch:path}`)."""
        return self.path.replace(":path}", "}")


__all__ = [
    "COMMITTED_HEADER",
    "READ_ORDER_HEADER",
    "Endpoint",
    "Header",
    "In",
    "Parameter",
    "Path",
    "Query",
    "Request",
]
