"""Handlers of erasures (erasures/erasures.py)."""

from __future__ import annotations

from typing import Any

from lorebase.contract.erasures import CreateErasure, ListErasures
from lorebase_keeper.api.call import DomainCall, handler
from lorebase_keeper.erasures import create_erasure as erase
from lorebase_keeper.erasures import list_erasures as erasures


@handler("create_erasure")
async def create_erasure(call: DomainCall[CreateErasure]) -> dict[str, Any]:
    return await erase(call.rt, call.access, call.domain, call.request.body)


@handler("list_erasures")
async def list_erasures(call: DomainCall[ListErasures]) -> dict[str, Any]:
    request = call.request
    return await erasures(call.rt, call.access, call.domain, limit=request.limit, cursor=request.cursor)
