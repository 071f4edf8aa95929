"""Administration: principals and their keys, the web app's sessions made from them
(web_sessions.py), grants, and the creation of Domains."""

from lorebase_keeper.admin import web_sessions
from lorebase_keeper.admin.domains import create_domain, describe, domain_settings
from lorebase_keeper.admin.grants import create_grant, delete_grant
from lorebase_keeper.admin.principals import bootstrap_admin, create_key, create_principal, revoke_key

__all__ = [
    "bootstrap_admin",
    "create_domain",
    "create_grant",
    "create_key",
    "create_principal",
    "delete_grant",
    "describe",
    "domain_settings",
    "revoke_key",
    "web_sessions",
]
