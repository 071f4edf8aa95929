"""Who the caller is and what it may do: authentication (keys as digests), grants and roles per
branch pattern (`Access`), and what one caller may read of a Domain on one branch (`Readable`, the
one answer every read surface asks)."""

from lorebase_keeper.access.auth import ADMIN_PRINCIPAL, ROLES, Access, Authenticator, Principal
from lorebase_keeper.access.readable import Readable, readable, readable_kind

__all__ = [
    "ADMIN_PRINCIPAL",
    "ROLES",
    "Access",
    "Authenticator",
    "Principal",
    "Readable",
    "readable",
    "readable_kind",
]
