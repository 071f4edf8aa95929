"""uvicorn's httptools protocol with deadlines on reading a request, so that no client holds a
connection open by sending slowly (Slowloris) or not at all.

uvicorn has a keep-alive timeout between requests but none while it reads one: a request whose
headers never end, or whose body stops short of its Content-Length, kept its connection forever,
and so did a client that connected and sent nothing. This subclass adds, per connection:

- **the header deadline** (`http.header_timeout_s`, 10 s): the request line and headers must have
  arrived that long after the connection opened, or after the previous response ended, or after
  the first byte of the request, whichever came first. It is a deadline, not an idle timeout: a
  byte a second does not move it. Past it the connection is closed, with a `408 request-timeout`
  problem when a request had begun. The headers are also capped at `http.max_header_bytes`
  (64 KiB; `431 headers-too-large`), as httptools would otherwise buffer them without end.
- **the body deadline** (`http.body_timeout_s`, 10 s, extended by one second per
  `http.body_min_bytes_per_s` received, 8 KiB/s, like Apache's mod_reqtimeout `MinRate`): the body
  must be complete by then. A client sending at least that rate never meets it, so a large import
  over a slow link still goes through, while 10 bytes of a declared 1,000 are cut off at about
  10 s. Past it, if the app has not answered yet, the answer is `408 request-timeout` (the route
  reading the body sees the client gone and its answer goes nowhere); if it has, the connection
  is closed. Either way it is not kept alive, as its body can no longer be told from the next
  request.

Each cut is counted in `lorebase_http_cut_off_total` by reason. The checks cost one timer per
request with a body and one per connection or response, no work per byte.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from lorebase.metrics import HTTP_CUT_OFF
from lorebase.problems import Problem


@dataclass(frozen=True)
class ReadLimits:
    header_timeout_s: float = 10.0
    body_timeout_s: float = 10.0
    body_min_bytes_per_s: float = 8192.0
    max_header_bytes: int = 65536


class TimedHttpToolsProtocol(HttpToolsProtocol):
    """HttpToolsProtocol with the header and body deadlines of `limits` (see the module)."""

    limits = ReadLimits()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timer: asyncio.TimerHandle | None = None
        self._body_timer: asyncio.TimerHandle | None = None
        self._reading_headers = False  # a request has begun and its headers are not complete
        self._header_bytes = 0
        self._has_body = False
        self._body_started = 0.0
        self._body_received = 0

    # The header deadline

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_header_deadline()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm_header_deadline()  # for the next request (uvicorn's keep-alive cuts silence)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._reading_headers = True
        self._has_body = False
        self._arm_header_deadline()

    def data_received(self, data: bytes) -> None:
        reading = self._reading_headers
        super().data_received(data)
        if self._reading_headers and not self.transport.is_closing():
            self._header_bytes = (self._header_bytes if reading else 0) + len(data)
            if self._header_bytes > self.limits.max_header_bytes:
                HTTP_CUT_OFF.labels("headers_too_large").inc()
                self._refuse(
                    Problem(
                        431,
                        "headers-too-large",
                        f"the request line and headers are over {self.limits.max_header_bytes} bytes "
                        "(http.max_header_bytes); send less",
                    )
                )

    def on_header(self, name: bytes, value: bytes) -> None:
        super().on_header(name, value)
        name = name.lower()
        if (name == b"content-length" and value.strip() != b"0") or name == b"transfer-encoding":
            self._has_body = True

    def on_headers_complete(self) -> None:
        self._reading_headers = False
        self._header_bytes = 0
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        super().on_headers_complete()
        if self._has_body:
            self._body_started = self.loop.time()
            self._body_received = 0
            self._body_timer = self.loop.call_later(self.limits.body_timeout_s, self._body_late)

    def _arm_header_deadline(self) -> None:
        if self._header_timer is None:
            self._header_timer = self.loop.call_later(self.limits.header_timeout_s, self._headers_late)

    def _headers_late(self) -> None:
        self._header_timer = None
        if self.transport.is_closing():
            return
        if not self._reading_headers and (
            self.pipeline or (self.cycle is not None and not self.cycle.response_complete)
        ):
            return  # a request is being answered; its headers came in time
        HTTP_CUT_OFF.labels("header_timeout").inc()
        if self._reading_headers:
            self._refuse(
                Problem(
                    408,
                    "request-timeout",
                    f"the request headers did not arrive within {self.limits.header_timeout_s:g} s "
                    "(http.header_timeout_s); send them at once",
                )
            )
        else:
            self.transport.close()  # connected (or kept alive) and sent nothing

    # The body deadline

    def on_body(self, body: bytes) -> None:
        self._body_received += len(body)
        super().on_body(body)

    def on_message_complete(self) -> None:
        self._has_body = False
        if self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None
        super().on_message_complete()

    def _body_late(self) -> None:
        self._body_timer = None
        if not self._has_body or self.transport.is_closing():
            return
        limits = self.limits
        deadline = (
            self._body_started + limits.body_timeout_s + self._body_received / limits.body_min_bytes_per_s
        )
        if self.loop.time() < deadline:
            self._body_timer = self.loop.call_at(deadline, self._body_late)
            return
        HTTP_CUT_OFF.labels("body_timeout").inc()
        cycle = self.cycle
        if cycle is not None and not cycle.response_started:
            self._refuse(
                Problem(
                    408,
                    "request-timeout",
                    f"the request body was not complete within {limits.body_timeout_s:g} s "
                    f"(http.body_timeout_s, and 1 s more per {limits.body_min_bytes_per_s:g} bytes "
                    "received); send it at once, or as much as Content-Length says",
                )
            )
        else:
            self.transport.close()

    # Both

    def _refuse(self, problem: Problem) -> None:
        """Answer `problem` below the app and close; the app's own answer, if any, goes nowhere."""
        cycle = self.cycle
        answering = cycle is not None and cycle.response_started and not cycle.response_complete
        if cycle is not None and not cycle.response_complete:
            cycle.disconnected = True  # its receive() sees the client gone, its send() is dropped
            cycle.message_event.set()
        if not answering:  # never inside a response that is being written
            body = problem.to_json()
            self.transport.write(
                STATUS_LINE[problem.status]
                + b"content-type: application/problem+json\r\ncontent-length: %d\r\nconnection: close\r\n\r\n"
                % len(body)
                + body
            )
        self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        for timer in (self._header_timer, self._body_timer):
            if timer is not None:
                timer.cancel()
        self._header_timer = self._body_timer = None
        super().connection_lost(exc)


def timed_protocol(limits: ReadLimits) -> type[TimedHttpToolsProtocol]:
    """The protocol class for uvicorn's `http` option, with these limits."""
    return type("TimedHttpToolsProtocol", (TimedHttpToolsProtocol,), {"limits": limits})


__all__ = ["ReadLimits", "TimedHttpToolsProtocol", "timed_protocol"]
