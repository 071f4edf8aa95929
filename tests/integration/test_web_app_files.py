"""The gateway serves the built web app under /app/ (lorebase_gateway.web_app): files, the single-page
app's fallback, no way out of the root, the security and cache headers, 503 when it is not built,
and `/` redirecting there; none of it in /openapi.json."""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from lorebase_gateway.app import create_app
from lorebase_gateway.gateway import Gateway
from lorebase_gateway.web_app import CHECKOUT, IMMUTABLE, SECURITY_HEADERS, web_root

INDEX = b"<!doctype html><title>Lorebase</title><div id=root></div>"
ASSET = b"console.log('lorebase')"


@pytest.fixture
def built(tmp_path: Path) -> Path:
    """A built app: index.html, a hashed asset, and things outside the root to reach for."""
    root = tmp_path / "dist"
    (root / "assets").mkdir(parents=True)
    (root / "index.html").write_bytes(INDEX)
    (root / "assets" / "index-3f2a9c1d.js").write_bytes(ASSET)
    (root / "favicon.svg").write_text("<svg/>")
    (tmp_path / "secret.txt").write_text("outside the root")
    (root / "escape.txt").symlink_to(tmp_path / "secret.txt")
    (root / "outside").symlink_to(tmp_path)
    return root


def gateway(root: Path | None) -> Gateway:
    return Gateway(max_body_bytes=1024, web_root=root)


@pytest_asyncio.fixture
async def http(built: Path) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(gateway(built))
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://lorebase.test"
    ) as c:
        yield c


async def raw_get(app: Any, raw_path: bytes) -> tuple[int, dict[str, str], bytes]:
    """GET a raw path as a server would hand it over (undecoded in raw_path, decoded in path), with
    no client normalising `..` or percent-escapes on the way."""
    from urllib.parse import unquote_to_bytes

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": unquote_to_bytes(raw_path).decode("utf-8", "surrogateescape"),
        "raw_path": raw_path,
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"lorebase.test")],
        "client": ("127.0.0.1", 1234),
        "server": ("lorebase.test", 80),
    }
    sent: list[dict[str, Any]] = []
    requested = False

    async def receive() -> dict[str, Any]:
        nonlocal requested
        if not requested:
            requested = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await asyncio.Event().wait()  # the client stays connected (the response is sent meanwhile)
        raise AssertionError("unreachable")

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    start = sent[0]
    headers = {k.decode().lower(): v.decode() for k, v in start["headers"]}
    return start["status"], headers, b"".join(m.get("body", b"") for m in sent[1:])


def secured(headers: Any) -> None:
    for name, value in SECURITY_HEADERS.items():
        assert headers[name] == value, name


async def test_files_the_fallback_and_the_headers(http: httpx.AsyncClient) -> None:
    index = await http.get("/app/")
    assert index.status_code == 200 and index.content == INDEX
    assert (
        index.headers["content-type"].startswith("text/html") and index.headers["cache-control"] == "no-cache"
    )
    secured(index.headers)
    asset = await http.get("/app/assets/index-3f2a9c1d.js")
    assert asset.status_code == 200 and asset.content == ASSET
    assert asset.headers["cache-control"] == IMMUTABLE and "javascript" in asset.headers["content-type"]
    secured(asset.headers)
    assert (await http.get("/app/favicon.svg")).headers["cache-control"] == "no-cache"
    # The app's own routes are index.html; a Record key with a dot is a route, not a file.
    for route in ("/app/d/supply", "/app/d/supply/records/Part/P-1.5", "/app/sessions/s-1?step=3"):
        page = await http.get(route)
        assert page.status_code == 200 and page.content == INDEX, route
        secured(page.headers)
    for missing in ("/app/assets/gone-1234.js", "/app/d/logo.png", "/app/robots.txt"):
        answer = await http.get(missing)
        assert answer.status_code == 404, missing
        assert answer.headers["content-type"] == "application/problem+json"
        secured(answer.headers)
    head = await http.head("/app/assets/index-3f2a9c1d.js")
    assert head.status_code == 200 and head.content == b""


async def test_the_root_redirects_to_the_app(http: httpx.AsyncClient) -> None:
    for path in ("/", "/app"):
        redirect = await http.get(path)
        assert redirect.status_code == 307 and redirect.headers["location"] == "/app/", path


async def test_no_path_leaves_the_root(built: Path) -> None:
    app = create_app(gateway(built))
    for raw, statuses in (
        (b"/app/../secret.txt", {404}),
        (b"/app/assets/../../secret.txt", {404}),
        (b"/app/%2e%2e/secret.txt", {404}),
        (b"/app/%2E%2E/%2e%2e/secret.txt", {404}),
        (b"/app/.%2e/secret.txt", {404}),
        (b"/app/assets%2f..%2f..%2fsecret.txt", {400}),
        (b"/app/..%2fsecret.txt", {400}),
        (b"/app/..%5csecret.txt", {400}),
        (b"/app/index.html%00.js", {400}),
        (b"/app/escape.txt", {404}),  # a symlink out of the root
        (b"/app/outside/secret.txt", {404}),  # a directory symlink out of the root
        (b"/app/./index.html", {404}),
        (b"/app//etc/passwd", {200}),  # an empty segment is no file: the app's fallback
    ):
        status, headers, body = await raw_get(app, raw)
        assert status in statuses, (raw, status, body[:200])
        assert b"outside the root" not in body, raw
        assert headers["x-content-type-options"] == "nosniff", raw
        if status == 200:
            assert body == INDEX


async def test_an_app_that_is_not_built_answers_503(tmp_path: Path) -> None:
    for root in (None, tmp_path / "nothing-here", tmp_path):
        app = create_app(gateway(root))
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client:
            for path in ("/app/", "/app/d/supply", "/app/assets/index.js"):
                answer = await client.get(path)
                assert answer.status_code == 503, (root, path)
                assert "make web" in answer.text and answer.headers["content-type"].startswith("text/html")
                secured(answer.headers)
            assert (await client.get("/")).status_code == 307


async def test_the_app_is_not_in_the_contract(http: httpx.AsyncClient) -> None:
    paths = (await http.get("/openapi.json")).json()["paths"]
    assert "/" not in paths and not [p for p in paths if p.startswith("/app")]


def test_the_root_setting() -> None:
    assert web_root("") is None and web_root("  ") is None
    assert web_root("web/dist") == CHECKOUT / "web" / "dist"
    assert (CHECKOUT / "src" / "lorebase").is_dir()  # the checkout, wherever the tests run from
    assert web_root("/srv/lorebase-web") == Path("/srv/lorebase-web")


async def test_text_files_go_gzip_compressed_to_a_client_that_accepts_it(
    built: Path, http: httpx.AsyncClient
) -> None:
    script = b"export const greeting = 'lorebase';\n" * 200
    (built / "assets" / "page-9a8b7c6d.js").write_bytes(script)
    (built / "assets" / "logo-1a2b3c4d.png").write_bytes(b"\x89PNG" + b"\0" * 4000)
    compressed = await http.get("/app/assets/page-9a8b7c6d.js", headers={"Accept-Encoding": "gzip, br"})
    assert compressed.status_code == 200
    assert (
        compressed.headers["content-encoding"] == "gzip" and compressed.headers["vary"] == "Accept-Encoding"
    )
    assert compressed.content == script  # httpx decodes it
    assert int(compressed.headers["content-length"]) < len(script) / 5
    assert compressed.headers["cache-control"] == IMMUTABLE
    assert compressed.headers["content-security-policy"] == SECURITY_HEADERS["Content-Security-Policy"]
    assert "javascript" in compressed.headers["content-type"]
    plain = await http.get("/app/assets/page-9a8b7c6d.js", headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in plain.headers and plain.content == script
    # Small files and images go as they are.
    small = await http.get("/app/assets/index-3f2a9c1d.js", headers={"Accept-Encoding": "gzip"})
    assert "content-encoding" not in small.headers and small.content == ASSET
    image = await http.get("/app/assets/logo-1a2b3c4d.png", headers={"Accept-Encoding": "gzip"})
    assert "content-encoding" not in image.headers


def brotli_copy(path: Path) -> bytes:
    """Compress `path` beside itself as the build does (web/scripts/compress.mjs, Node's zlib)."""
    script = Path(CHECKOUT / "web" / "scripts" / "compress.mjs")
    subprocess.run(["node", str(script), str(path.parent)], check=True, capture_output=True)
    return path.with_name(path.name + ".br").read_bytes()


async def test_the_builds_brotli_copy_goes_to_a_client_that_accepts_br(
    built: Path, http: httpx.AsyncClient
) -> None:
    script = b"export const greeting = 'lorebase';\n" * 200
    asset = built / "assets" / "page-9a8b7c6d.js"
    asset.write_bytes(script)
    copy = brotli_copy(asset)
    assert len(copy) < len(script) / 20
    async with http.stream(
        "GET", "/app/assets/page-9a8b7c6d.js", headers={"Accept-Encoding": "gzip, deflate, br"}
    ) as answer:
        sent = b"".join([chunk async for chunk in answer.aiter_raw()])
    assert answer.headers["content-encoding"] == "br" and answer.headers["vary"] == "Accept-Encoding"
    assert sent == copy and answer.headers["cache-control"] == IMMUTABLE
    assert "javascript" in answer.headers["content-type"]
    # br refused (q=0) or not named: gzip; a copy older than its file (a rebuilt file): not sent.
    for accept in ("gzip, br;q=0", "gzip"):
        gzipped = await http.get("/app/assets/page-9a8b7c6d.js", headers={"Accept-Encoding": accept})
        assert gzipped.headers["content-encoding"] == "gzip" and gzipped.content == script
    os.utime(asset.with_name(asset.name + ".br"), ns=(0, 0))
    stale = await http.get("/app/assets/page-9a8b7c6d.js", headers={"Accept-Encoding": "br"})
    assert "content-encoding" not in stale.headers and stale.content == script
