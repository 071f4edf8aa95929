"""Logs of every service: one JSON object per line (or text), each carrying the request id.

The gateway takes a request id from the client's `X-Request-Id` (when it is short and plain) or makes
one, answers it in the same header, and sends it to keeper, feed and scribe in the gRPC metadata key
`lorebase-request-id`. Each service puts it in `REQUEST_ID` for the call (lorebase.metrics'
interceptor), and every log record made meanwhile carries it as `record.request_id`. With tracing on
(lorebase.tracing), a record made inside a span also carries its trace id as `record.trace_id`.
"""

from __future__ import annotations

import logging
import re
import sys
import time
import uuid
from contextvars import ContextVar
from typing import Any

import orjson

from lorebase import tracing
from lorebase.config import Settings

REQUEST_ID: ContextVar[str | None] = ContextVar("lorebase_request_id", default=None)
REQUEST_ID_HEADER = "x-request-id"
REQUEST_ID_METADATA = "lorebase-request-id"
FORMATS = ("auto", "json", "text")

_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:+=@-]{0,127}")


def request_id_from(value: str | None) -> str:
    """The client's request id when it is plain (up to 128 letters, digits and `._:+=@-`), else a new one."""
    if value and _SAFE_ID.fullmatch(value):
        return value
    return uuid.uuid4().hex


class JsonFormatter(logging.Formatter):
    """ts, level, logger, message, service, request_id and trace_id (when set), exception (when there
    is one)."""

    def __init__(self, service: str) -> None:
        super().__init__()
        self.service = service

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "service": self.service,
        }
        request_id = getattr(record, "request_id", None)
        if request_id:
            line["request_id"] = request_id
        trace_id = getattr(record, "trace_id", None)
        if trace_id:
            line["trace_id"] = trace_id
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            line["exception"] = record.exc_text
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        return orjson.dumps(line, default=str).decode()


class TextFormatter(logging.Formatter):
    """`time LEVEL logger: message`, then `[request_id]` (and ` trace=<trace_id>`) when the record has one."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        request_id = getattr(record, "request_id", None)
        trace_id = getattr(record, "trace_id", None)
        if not request_id and not trace_id:
            return text
        first, newline, rest = text.partition("\n")
        marks = " ".join(
            ([f"[{request_id}]"] if request_id else []) + ([f"trace={trace_id}"] if trace_id else [])
        )
        return f"{first} {marks}{newline}{rest}"


def _install_record_factory() -> None:
    """Every record made while a call is served gets that call's request id (one ContextVar read) and,
    with tracing on, the current trace id."""
    previous = logging.getLogRecordFactory()
    if getattr(previous, "lorebase_request_id", False):
        return

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        record.request_id = REQUEST_ID.get()
        record.trace_id = tracing.trace_id()
        return record

    factory.lorebase_request_id = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(factory)


def _uses_json(format: str) -> bool:
    if format not in FORMATS:
        raise SystemExit(f"logging.format is one of {', '.join(FORMATS)}, not {format!r}")
    if format == "auto":
        return not sys.stderr.isatty()
    return format == "json"


def log_handler(service: str, *, format: str = "auto") -> logging.Handler:
    """A stderr handler writing `format` (auto: JSON unless stderr is a terminal)."""
    handler = logging.StreamHandler(sys.stderr)
    if _uses_json(format):
        handler.setFormatter(JsonFormatter(service))
    else:
        handler.setFormatter(TextFormatter())
    return handler


def configure_logging(service: str, *, format: str = "auto", level: str = "INFO") -> None:
    """The root logger of a service process: one handler on stderr writing `format`."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    root.addHandler(log_handler(service, format=format))
    try:
        root.setLevel(level.upper())
    except ValueError:
        raise SystemExit(f"logging.level is DEBUG, INFO, WARNING or ERROR, not {level!r}") from None


def configure_service_logging(service: str, settings: Settings) -> None:
    """configure_logging from the `logging` settings section."""
    configure_logging(service, format=settings.model.logging.format, level=settings.model.logging.level)


# Installed on import: whatever handlers a process has (a test's caplog too), its records carry the id.
_install_record_factory()

__all__ = [
    "REQUEST_ID",
    "REQUEST_ID_HEADER",
    "REQUEST_ID_METADATA",
    "JsonFormatter",
    "TextFormatter",
    "configure_logging",
    "configure_service_logging",
    "log_handler",
    "request_id_from",
]
