"""The gateway's read cache without a stack: what a request asks, and the bounds of what is kept
(lorebase_gateway.read_cache; tests/integration/test_gateway_read_cache.py runs it on the real stack)."""

from __future__ import annotations

from typing import Any

import pytest
from lorebase_gateway.read_cache import Looked, ReadCache, max_stale, min_revision

from lorebase.problems import Problem

REVISION = "ab" * 32


def _scope(path: str, key: bytes = b"Bearer k", **headers: str) -> dict[str, Any]:
    raw = [(b"authorization", key)]
    raw += [(name.replace("_", "-").lower().encode(), value.encode()) for name, value in headers.items()]
    return {"path": path, "query_string": b"", "headers": raw}


def _cache(**kwargs: Any) -> ReadCache:
    settings = {"max_stale_s": 60.0, "ttl_s": 5.0, "max_entries": 2, "max_entry_bytes": 10, **kwargs}
    return ReadCache(**settings)


def _put(
    cache: ReadCache,
    looked: Looked,
    body: bytes = b"{}",
    made: float = 100.0,
    revision: str = REVISION,
    order: str | None = None,
) -> None:
    cache.put(looked, body=body, headers=[], etag=None, revision=revision, order=order, made=made, route=None)


@pytest.mark.parametrize(
    ("header", "accepted"),
    [
        ("max-stale=30", 30.0),
        ("MAX-STALE = 30", 30.0),
        ('max-stale="30"', 30.0),
        ("max-stale=600", 60.0),  # cut to the setting
        ("max-stale", 60.0),  # any staleness: the setting
        ("max-age=0, max-stale=5", 5.0),
        ("max-age=0", None),
        ("max-stale=5, no-cache", None),
        ("", None),
    ],
)
def test_what_a_cache_control_header_accepts(header: str, accepted: float | None) -> None:
    assert max_stale(header, 60.0) == accepted


@pytest.mark.parametrize(
    "header", ["max-stale=abc", "max-stale=-1", "max-stale=1.5", "max-stale=", "max-stale=1e3"]
)
def test_a_max_stale_that_is_not_whole_seconds_is_refused(header: str) -> None:
    with pytest.raises(Problem) as refused:
        max_stale(header, 60.0)
    assert refused.value.status == 400 and "whole seconds" in refused.value.detail


@pytest.mark.parametrize("value", ["abc", REVISION.upper(), REVISION[:63], REVISION + "0", "main"])
def test_a_min_revision_is_a_full_revision_id(value: str) -> None:
    assert min_revision(REVISION) == REVISION
    with pytest.raises(Problem) as refused:
        min_revision(value)
    assert refused.value.status == 400


def test_the_least_recently_used_entry_goes_first_and_large_answers_are_not_kept() -> None:
    cache = _cache()
    a, b, c = (cache.read(_scope(p, cache_control="max-stale=60"), strict=True) for p in ("/a", "/b", "/c"))
    _put(cache, a)
    _put(cache, b)
    assert cache.get(a, 100.5) is not None  # a is now the most recently used
    _put(cache, c)
    assert len(cache) == 2 and cache.get(b, 100.5) is None and cache.get(a, 100.5) is not None
    big = cache.read(_scope("/big", cache_control="max-stale=60"), strict=True)
    _put(cache, big, body=b"x" * 11)
    assert cache.get(big, 100.5) is None


def test_an_entry_lives_no_longer_than_the_grants_cache_and_no_older_than_asked() -> None:
    cache = _cache()
    looked = cache.read(_scope("/r", cache_control="max-stale=60"), strict=True)
    _put(cache, looked)
    assert cache.get(looked, 104.9) is not None
    assert cache.get(looked, 105.0) is None  # ttl_s = 5 < max-stale
    _put(cache, looked, made=200.0)
    strict = cache.read(_scope("/r", cache_control="max-stale=1"), strict=True)
    assert cache.get(strict, 201.5) is None and cache.get(looked, 201.5) is not None


def test_an_answer_made_earlier_never_replaces_one_made_later() -> None:
    cache = _cache()
    looked = cache.read(_scope("/r", cache_control="max-stale=60"), strict=True)
    _put(cache, looked, made=100.0, revision="cd" * 32)
    _put(cache, looked, made=99.0, revision=REVISION)
    found = cache.get(looked, 100.5)
    assert found is not None and found[0].revision == "cd" * 32


def test_credentials_sessions_and_plain_reads() -> None:
    cache = _cache()
    one = cache.read(_scope("/r", key=b"Bearer one", cache_control="max-stale=60"), strict=True)
    two = cache.read(_scope("/r", key=b"Bearer two", cache_control="max-stale=60"), strict=True)
    assert one.key != two.key and b"one" not in repr(one.key).encode()
    _put(cache, one)
    assert cache.get(two, 100.5) is None
    plain = cache.read(_scope("/r", key=b"Bearer one"), strict=True)
    assert plain.ask is None and cache.get(plain, 100.5) is None
    session = cache.read(
        _scope("/r", key=b"Bearer one", cache_control="max-stale=60", lorebase_session="s"), strict=True
    )
    assert session.key is None and cache.get(session, 100.5) is None
    named = cache.read(
        _scope("/r", key=b"Bearer one", cache_control="max-stale=60", lorebase_min_revision="cd" * 32),
        strict=True,
    )
    assert cache.get(named, 100.5) is None  # the entry describes another Revision
    bad = _scope("/r", cache_control="max-stale=x")
    assert cache.read(bad, strict=False).ask is None
    with pytest.raises(Problem):
        cache.read(bad, strict=True)


def test_a_named_revision_is_served_a_later_head_of_its_branch_only_when_the_order_is_known() -> None:
    cache = _cache(max_entries=8)
    older, newer, other = "01" * 32, "02" * 32, "03" * 32

    def looked(named: str | None = None, path: str = "/r", key: bytes = b"Bearer k") -> Looked:
        headers = {"cache_control": "max-stale=60"}
        if named is not None:
            headers["lorebase_min_revision"] = named
        return cache.read(_scope(path, key, **headers), strict=True)

    _put(cache, looked(), revision=newer, order="main1.7")
    assert cache.get(looked(older), 100.5) is None  # older's place is unknown
    _put(cache, looked(path="/s"), revision=older, order="main1.5")  # learnt: older is generation 5
    assert cache.get(looked(older), 100.5) is not None  # newer (7) is a later head of that branch
    _put(cache, looked(path="/t"), revision=older, order="other1.5")  # the same id on another branch
    assert cache.get(looked(older, path="/t"), 100.5) is not None
    _put(cache, looked(path="/t"), revision=newer, order="other2.9", made=101.0)  # made again: new lineage
    assert cache.get(looked(older, path="/t"), 101.5) is None
    # A request naming a Revision that keeper answered at a later head teaches that bound.
    _put(cache, looked(other, path="/u"), revision=newer, order="main1.7")
    assert cache.get(looked(other), 100.5) is not None
    # ... on that credential's word: another credential naming it learns nothing from it.
    _put(cache, looked(key=b"Bearer j"), revision=newer, order="main1.7")
    assert cache.get(looked(other, key=b"Bearer j"), 100.5) is None
    assert cache.get(looked(older, key=b"Bearer j"), 100.5) is not None  # keeper's own word
    # An entry whose place keeper did not say is served only to the Revision it describes.
    _put(cache, looked(path="/v"), revision=newer, order=None)
    assert cache.get(looked(older, path="/v"), 100.5) is None
    assert cache.get(looked(newer, path="/v"), 100.5) is not None
