"""What a read asks of consistency (lorebase.consistency) and the URLs that list several servers."""

from __future__ import annotations

from lorebase_feed.relay import nats_servers

from lorebase import consistency
from lorebase_store.migrate import engine_target

R = "a" * 64


def test_a_plain_read_asks_for_nothing() -> None:
    ask = consistency.ask_of(at=None, min_revision=None, if_none_match=None, max_stale_s=None)
    assert ask.plain and ask.metadata() == ()
    assert consistency.from_metadata([]) is consistency.PLAIN


def test_only_a_full_revision_id_is_named() -> None:
    assert consistency.ask_of(at=R[:12], min_revision=None, if_none_match=None, max_stale_s=None).plain
    assert consistency.ask_of(at="release-1", min_revision=None, if_none_match=None, max_stale_s=None).plain
    assert consistency.ask_of(at=R.upper(), min_revision=None, if_none_match=None, max_stale_s=None).at == R


def test_the_seen_revision_comes_from_the_header_else_the_etag() -> None:
    etag = f'"{"b" * 64}.0123456789abcdef"'
    ask = consistency.ask_of(at=None, min_revision=None, if_none_match=f'W/"x", {etag}', max_stale_s=30)
    assert ask.seen == "b" * 64 and ask.max_stale_s == 30 and not ask.plain
    ask = consistency.ask_of(at=None, min_revision=R, if_none_match=etag, max_stale_s=None)
    assert ask.seen == R and ask.plain  # seen alone does not opt into staleness


def test_the_ask_travels_in_metadata() -> None:
    ask = consistency.ReadAsk(at=R, seen="c" * 64, max_stale_s=12.5)
    assert consistency.from_metadata(ask.metadata()) == ask
    assert consistency.from_metadata([("lorebase-max-stale", "soon")]) is consistency.PLAIN


def test_several_postgresql_hosts_become_sqlalchemy_host_parameters() -> None:
    url = "postgresql://u:p@10.0.0.1:5432,pg-1:5433,pg-2/db?target_session_attrs=read-write"
    target, tls = engine_target(url)
    assert target == (
        "postgresql+asyncpg://u:p@/db?host=10.0.0.1:5432&host=pg-1:5433&host=pg-2:5432"
        "&target_session_attrs=read-write"
    )
    assert tls == {}
    assert engine_target("postgresql://u:p@h:5432/db") == ("postgresql+asyncpg://u:p@h:5432/db", {})


def test_several_nats_servers_are_listed_apart() -> None:
    assert nats_servers("nats://t@a:1, nats://t@b:2,") == ["nats://t@a:1", "nats://t@b:2"]
    assert nats_servers("nats://t@a:1") == ["nats://t@a:1"]
