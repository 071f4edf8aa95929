"""Erasures: deleting the vault values of Records (docs/erasure.md).

`POST /erasures` names the Records (`records`: `Kind/key` references) or a subject (the Records of a
Kind whose Attribute equals a value) and the reason, and deletes the value of every vault entry of
those Records on every branch and Revision; needs data.erase (admin) and is audited.
`GET /erasures` lists them, newest first.
"""

from __future__ import annotations

from typing import Annotated, Any

from msgspec import UNSET, Meta, UnsetType

from lorebase.contract import answers
from lorebase.contract._base import DOMAIN, Body
from lorebase.contract.endpoint import Endpoint, Path, Query, Request
from lorebase.contract.fields import Cursor, DomainName, Name
from lorebase.contract.policy import Need, P, Scope, Target, grant
from lorebase.contract.schemas import members

RecordReference = Annotated[
    str,
    Meta(
        min_length=3,
        max_length=1024,
        pattern=r"^[^\x00/]+/[^\x00]+$",
        description="A Record as Kind/key, e.g. Customer/C-1",
    ),
]
Reason = Annotated[str, Meta(min_length=1, max_length=4096, pattern=r"^[^\x00]*$", description="Why")]


class Subject(Body, frozen=True, kw_only=True):
    """The Records of `kind` whose `attribute` equals `value` (the data subject of a request)."""

    kind: Name
    attribute: Name
    value: Annotated[Any, Meta(description="The value, as written (a string, number or boolean)")]


@members(one_of=("records", "subject"))
class NewErasure(Body, frozen=True, kw_only=True):
    records: Annotated[list[RecordReference], Meta(min_length=1, max_length=1000)] | UnsetType = UNSET
    subject: Subject | UnsetType = UNSET
    reason: Reason


class CreateErasure(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    body: NewErasure


class ListErasures(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    limit: Annotated[Annotated[int, Meta(ge=0, le=200, description="Page size; 0: 50")], Query] = 0
    cursor: Annotated[Cursor, Query] = ""


ERASURES = DOMAIN + "/erasures"

ENDPOINTS = [
    Endpoint(
        "create_erasure",
        "POST",
        ERASURES,
        "keeper",
        "CreateErasure",
        CreateErasure,
        "Erase the vault values of Records (named, or a subject's) on every branch and Revision",
        "erasures",
        policy=grant(Need(P.DATA_ERASE, "default"), scope=Scope.TARGET, target=Target.ERASURE),
        clears_cache=True,
        success=201,
        problems=(404,),
        response=answers.records.Erasure,
    ),
    Endpoint(
        "list_erasures",
        "GET",
        ERASURES,
        "keeper",
        "ListErasures",
        ListErasures,
        "The erasures of a Domain, newest first",
        "erasures",
        policy=grant(Need(P.DATA_ERASE, "default"), scope=Scope.READABLE),
        response=answers.records.ErasureList,
    ),
]

__all__ = ["ENDPOINTS", "CreateErasure", "ListErasures", "NewErasure", "Subject"]
