"""Log lines: one JSON object per line with the request id; request ids from clients are checked."""

from __future__ import annotations

import io
import logging

import orjson
import pytest

from lorebase.logs import REQUEST_ID, JsonFormatter, TextFormatter, configure_logging, request_id_from


def _logger(formatter: logging.Formatter) -> tuple[logging.Logger, io.StringIO]:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(formatter)
    logger = logging.getLogger(f"lorebase.test.{id(out)}")
    logger.propagate = False
    logger.handlers = [handler]
    logger.setLevel(logging.INFO)
    return logger, out


def test_a_json_line_has_the_documented_members() -> None:
    logger, out = _logger(JsonFormatter("keeper"))
    token = REQUEST_ID.set("abc-123")
    try:
        logger.info("committed %d revisions", 3)
    finally:
        REQUEST_ID.reset(token)
    logger.warning("no request here")
    first, second = (orjson.loads(line) for line in out.getvalue().splitlines())
    assert first["message"] == "committed 3 revisions"
    assert first["level"] == "INFO"
    assert first["service"] == "keeper"
    assert first["logger"].startswith("lorebase.test.")
    assert first["request_id"] == "abc-123"
    assert first["ts"].endswith("Z") and "T" in first["ts"]
    assert "request_id" not in second


def test_an_exception_stays_inside_its_one_json_line() -> None:
    logger, out = _logger(JsonFormatter("feed"))
    try:
        raise ValueError("bad\nvalue")
    except ValueError:
        logger.exception("relay pass failed")
    lines = out.getvalue().splitlines()
    assert len(lines) == 1
    line = orjson.loads(lines[0])
    assert line["level"] == "ERROR"
    assert "Traceback" in line["exception"] and "ValueError: bad" in line["exception"]


def test_text_lines_name_the_request_id_when_there_is_one() -> None:
    logger, out = _logger(TextFormatter())
    token = REQUEST_ID.set("r-1")
    try:
        logger.info("hello")
    finally:
        REQUEST_ID.reset(token)
    logger.info("bye")
    first, second = out.getvalue().splitlines()
    assert first.endswith(": hello [r-1]") and " INFO lorebase.test." in first
    assert second.endswith(": bye")


@pytest.mark.parametrize("given", ["abc", "0f8c2a1e-5b7d-4c1e-9a55-1b2c3d4e5f60", "trace:1.2_3+x=y@z"])
def test_a_plain_client_request_id_is_kept(given: str) -> None:
    assert request_id_from(given) == given


@pytest.mark.parametrize("given", [None, "", "a" * 129, "has space", "new\nline", "<script>", "-leading"])
def test_anything_else_gets_a_new_request_id(given: str | None) -> None:
    made = request_id_from(given)
    assert made != given and len(made) == 32 and made.isalnum()


def test_configure_logging_refuses_an_unknown_format() -> None:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        with pytest.raises(SystemExit, match="logging.format"):
            configure_logging("gateway", format="xml")
        configure_logging("gateway", format="json", level="warning")
        assert isinstance(root.handlers[-1].formatter, JsonFormatter)
        assert root.level == logging.WARNING
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
