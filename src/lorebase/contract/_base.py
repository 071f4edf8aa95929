"""What the area modules share: the body Struct base and the path prefixes."""

from __future__ import annotations

import msgspec

API = "/api/v1"
DOMAIN = API + "/domains/{domain}"
RECORD = DOMAIN + "/kinds/{kind}/records/{key}"
PROPOSAL = DOMAIN + "/proposals/{proposal}"
MEMORY = API + "/memory"


class Body(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    """A JSON request body: its members, typed; a member it does not declare is refused (422)."""


__all__ = ["API", "DOMAIN", "MEMORY", "PROPOSAL", "RECORD", "Body"]
