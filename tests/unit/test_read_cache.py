"""The read cache's bounds and keys (lorebase_keeper.read_cache), and the grants digest it keys by."""

from __future__ import annotations

import time
from typing import Any

from lorebase_keeper.access import Access, Principal
from lorebase_keeper.read_cache import ReadCache

from lorebase_store import GrantRow

VIEWER = Principal("usr_viewer", "user", "viewer")


def _access(principal: Principal, *grants: tuple[str, tuple[str, ...], tuple[str, ...] | None]) -> Access:
    rows = tuple(
        GrantRow(f"g{i}", 1, principal.id, role, branches, kinds)
        for i, (role, branches, kinds) in enumerate(grants)
    )
    return Access(principal, rows)


class _Domain:
    id = 1


def test_the_grants_digest_is_what_the_grants_allow_not_who_holds_them() -> None:
    one = _access(VIEWER, ("viewer", ("*",), None))
    same = _access(Principal("usr_other", "service", "other"), ("viewer", ("*",), None))
    narrowed = _access(VIEWER, ("viewer", ("*",), ("Supplier",)))
    other_branches = _access(VIEWER, ("viewer", ("main",), None))
    editor = _access(VIEWER, ("editor", ("*",), None))
    admin = _access(Principal("usr_admin", "user", "admin"))
    assert one.grants_digest == same.grants_digest
    digests = {d.grants_digest for d in (one, narrowed, other_branches, editor, admin)}
    assert len(digests) == 5


def test_an_entry_is_served_only_with_the_same_domain_and_before_it_expires() -> None:
    cache = ReadCache(max_entries=10, ttl_s=60)
    domain: Any = _Domain()
    access = _access(VIEWER, ("viewer", ("*",), None))
    key = cache.key(domain, "main", "rev-1", access, ("get_record", "Supplier", "S-1", True))
    cache.put(key, domain, {"values": 1})
    assert cache.get(key, domain) == {"values": 1}
    other: Any = _Domain()
    assert cache.get(key, other) is None  # the schema or settings were reloaded
    moved = cache.key(domain, "main", "rev-2", access, ("get_record", "Supplier", "S-1", True))
    assert cache.get(moved, domain) is None
    expired = ReadCache(max_entries=10, ttl_s=0.01)
    expired.put(key, domain, {"values": 1})
    time.sleep(0.02)
    assert expired.get(key, domain) is None


def test_the_cache_is_bounded_and_can_be_switched_off() -> None:
    cache = ReadCache(max_entries=2, ttl_s=60)
    domain: Any = _Domain()
    access = _access(VIEWER, ("viewer", ("*",), None))
    keys = [cache.key(domain, "main", "rev", access, ("get_record", "K", str(i), False)) for i in range(3)]
    for key in keys:
        cache.put(key, domain, key)
    assert len(cache) == 2 and cache.get(keys[0], domain) is None and cache.get(keys[2], domain) == keys[2]
    off = ReadCache(max_entries=0, ttl_s=60)
    off.put(keys[0], domain, keys[0])
    assert not off.enabled and len(off) == 0
