"""Caps on the event streams of a gateway process, in all and per principal."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from lorebase_gateway.stream_caps import StreamCaps

from lorebase.problems import Problem


@dataclass(eq=False)
class Stream:
    principal: str


def test_a_principal_past_its_cap_is_refused_until_one_ends() -> None:
    caps = StreamCaps(per_principal=2, total=10)
    held = [Stream("usr_a"), Stream("usr_a")]
    for stream in held:
        caps.hold(stream)
    with pytest.raises(Problem) as refused:
        caps.hold(Stream("usr_a"))
    assert refused.value.status == 429 and refused.value.extra["cap"] == "principal"
    assert refused.value.extra["retry_after"] >= 1
    caps.hold(Stream("usr_b"))
    for _ in range(3):
        caps.hold(Stream("usr_admin"))  # the admin: only the gateway's cap
    caps.release(held[0])
    caps.release(held[0])  # twice: counted once
    caps.release(Stream("usr_a"))  # never held: ignored
    assert caps.of("usr_a") == 1 and len(caps) == 5
    caps.hold(Stream("usr_a"))


def test_the_gateway_cap_counts_the_streams_opening() -> None:
    caps = StreamCaps(per_principal=5, total=2)
    caps.hold(Stream("usr_a"))
    with caps.opening():
        with pytest.raises(Problem) as refused, caps.opening():
            pass
    assert refused.value.extra["cap"] == "gateway"
    with caps.opening():  # the first one gave its slot back
        pass
