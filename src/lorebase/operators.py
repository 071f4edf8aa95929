"""The operator RPCs (Feed.Status, Scribe.ListJobs): the state of a running service, for whoever
runs Lorebase. They answer only a credential that is the admin key of the service's settings
(`admin.key`: `lorebase up` and the Helm chart give it to every service), compared as digests in
constant time; a service without an admin key answers nobody. Every other RPC is authorized by
keeper from its endpoint's policy (lorebase.contract.policy)."""

from __future__ import annotations

import hmac
from collections.abc import Mapping

from lorebase.credentials import key_digest, presented_digest, unknown_credential
from lorebase.problems import Problem


class Operators:
    def __init__(self, admin_key: str) -> None:
        self._digest = key_digest(admin_key) if admin_key else None

    def require(self, metadata: Mapping[str, str]) -> None:
        """401 without the admin key (403 when the service has none to compare with)."""
        authorization = metadata.get("authorization")
        if not authorization:
            raise unknown_credential("send the admin key as 'Authorization: Bearer <key>'")
        if self._digest is None:
            raise Problem(403, "forbidden", "this service has no admin key (admin.key): it answers nobody")
        if not hmac.compare_digest(presented_digest(authorization), self._digest):
            raise unknown_credential("operator calls need the admin key")


__all__ = ["Operators"]
