"""Handlers of Scribe's suggestions from resolve misses (governance/suggestions.py)."""

from __future__ import annotations

from typing import Any

from lorebase.contract.governance import ListSuggestions, SuggestionCall
from lorebase_keeper.api.call import DomainCall, handler
from lorebase_keeper.governance import suggestions


@handler("list_suggestions")
async def list_suggestions(call: DomainCall[ListSuggestions]) -> dict[str, Any]:
    return await suggestions.list_suggestions(call.rt, call.access, call.domain, call.request.status)


@handler("accept_suggestion")
async def accept_suggestion(call: DomainCall[SuggestionCall]) -> dict[str, Any]:
    return await suggestions.decide(call.rt, call.access, call.domain, call.request.id, "accept")


@handler("dismiss_suggestion")
async def dismiss_suggestion(call: DomainCall[SuggestionCall]) -> dict[str, Any]:
    return await suggestions.decide(call.rt, call.access, call.domain, call.request.id, "dismiss")
