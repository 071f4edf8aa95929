"""Governance: the suggestions Scribe mines from resolve misses."""

from __future__ import annotations

from typing import Annotated, Literal

from lorebase.contract import answers
from lorebase.contract._base import DOMAIN
from lorebase.contract.endpoint import Endpoint, Path, Query, Request
from lorebase.contract.fields import DomainName, Name
from lorebase.contract.policy import Need, P, Scope, grant


class ListSuggestions(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    status: Annotated[Literal["", "open", "accepted", "dismissed", "all"], Query] = ""


class SuggestionCall(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    id: Annotated[Name, Path]


ENDPOINTS = [
    Endpoint(
        "list_suggestions",
        "GET",
        DOMAIN + "/suggestions",
        "keeper",
        "ListSuggestions",
        ListSuggestions,
        "Alias, value alias and description suggestions from resolve misses",
        "governance",
        policy=grant(Need(P.DOMAIN_SETTINGS, "default"), scope=Scope.READABLE),
        response=answers.writes.SuggestionList,
    ),
    Endpoint(
        "accept_suggestion",
        "POST",
        DOMAIN + "/suggestions/{id}/accept",
        "keeper",
        "AcceptSuggestion",
        SuggestionCall,
        "Accept a suggestion: the answer holds the schema patch to apply",
        "governance",
        policy=grant(Need(P.DOMAIN_SETTINGS, "default"), scope=Scope.READABLE),
        problems=(409,),
        body_optional=True,
        response=answers.writes.Decided,
    ),
    Endpoint(
        "dismiss_suggestion",
        "POST",
        DOMAIN + "/suggestions/{id}/dismiss",
        "keeper",
        "DismissSuggestion",
        SuggestionCall,
        "Dismiss a suggestion",
        "governance",
        policy=grant(Need(P.DOMAIN_SETTINGS, "default"), scope=Scope.READABLE),
        problems=(409,),
        body_optional=True,
        response=answers.writes.Decided,
    ),
]
