"""The web app's files: `GET /` redirects to `/app/`, and `/app/...` serves the built app from
`web.root` (`make web` writes web/dist; a relative root is resolved against the checkout holding
Lorebase, so `lorebase up` finds it from any working directory).

A path that names a file under the root is that file. Any other path is the app's own route
(`/app/d/supply/records`): the single-page app's `index.html`, unless it looks like a file (its last
segment ends with the extension of a kind of file an app is built of: `.js`, `.css`, `.png`...),
which is a 404. (Not any dot: a Record key such as `P-1.5` is part of an app route.) No request reaches a file outside the root: an encoded
slash or backslash, a NUL, a `.` or `..` segment (however encoded) answer 400 or 404 before the
file system is asked, and a symlink that leads out of the root is a 404. When the root holds no
`index.html`, every `/app/` request answers 503 saying how to build it.

These routes are not REST endpoints: they are not in /openapi.json. Every answer carries the app's
Content-Security-Policy (same origin only, no framing), `X-Content-Type-Options: nosniff` and
`Referrer-Policy: no-referrer`; hashed assets under `/app/assets/` are cached for a year, immutable,
and `index.html` is revalidated on every load (`no-cache`), so a new build is picked up at once.

Text files (scripts, styles, SVG, JSON, source maps) of 1 KiB or more go compressed to a client that
accepts it (`Vary: Accept-Encoding`): Brotli when the build wrote a copy beside the file (`name.br`,
web/scripts/compress.mjs in `npm run build`) and the client accepts `br`, else gzip, compressed once
per build (kept in memory by path, size and modification time).
"""

from __future__ import annotations

import gzip
import mimetypes
import re
from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, RedirectResponse, Response

import lorebase
from lorebase.problems import Problem
from lorebase_gateway.responses import Route, problem_response

# The checkout: src/lorebase/__init__.py -> the repository root (where web/ lives).
CHECKOUT = Path(lorebase.__file__).resolve().parents[2]
PREFIX = "/app/"

SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data: blob:; style-src 'self' "
    "'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
IMMUTABLE = "public, max-age=31536000, immutable"
_ENCODED = re.compile(r"%(2f|5c|00)", re.IGNORECASE)  # an encoded /, \ or NUL in the raw path
_ASSET = re.compile(
    r".*\.(js|mjs|cjs|css|map|json|txt|xml|html?|ico|png|jpe?g|gif|svg|webp|avif|bmp|woff2?|ttf|otf|eot"
    r"|wasm|webmanifest)",
    re.IGNORECASE,
)

_COMPRESSIBLE = re.compile(r".*\.(js|mjs|cjs|css|map|json|svg|txt|xml|webmanifest)", re.IGNORECASE)
COMPRESS_MIN_BYTES = 1024
_CACHE_ENTRIES = 512

NOT_BUILT = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Lorebase: the web app is not built</title></head>
<body><h1>The web app is not built</h1>
<p>Run <code>make web</code> in the Lorebase checkout (it writes <code>web/dist</code>), or point the
setting <code>web.root</code> at a built app, then reload this page. The REST API is at
<a href="/docs">/docs</a>.</p></body></html>
"""


def web_root(setting: str) -> Path | None:
    """The directory `web.root` names (relative: under the checkout); None when it is empty."""
    if not setting.strip():
        return None
    path = Path(setting).expanduser()
    return path if path.is_absolute() else CHECKOUT / path


class AppFiles:
    """The files of the built app under `root` (None: no app)."""

    def __init__(self, root: Path | None) -> None:
        self.root = root
        self._gzipped: dict[Path, tuple[tuple[int, int], bytes]] = {}

    def gzipped(self, found: Path) -> bytes | None:
        """The gzip encoding of a text file of the app (None: not worth it), compressed once per
        version of the file."""
        if not _COMPRESSIBLE.fullmatch(found.name):
            return None
        stat = found.stat()
        if stat.st_size < COMPRESS_MIN_BYTES:
            return None
        version = (stat.st_size, stat.st_mtime_ns)
        cached = self._gzipped.get(found)
        if cached is not None and cached[0] == version:
            return cached[1]
        body = gzip.compress(found.read_bytes(), compresslevel=9, mtime=0)
        if len(self._gzipped) >= _CACHE_ENTRIES:
            self._gzipped.clear()
        self._gzipped[found] = (version, body)
        return body

    def brotli(self, found: Path) -> Path | None:
        """The build's Brotli copy of a text file of the app, if it has one as new as the file."""
        if not _COMPRESSIBLE.fullmatch(found.name):
            return None
        copy = found.with_name(found.name + ".br")
        try:
            return copy if copy.stat().st_mtime_ns >= found.stat().st_mtime_ns else None
        except OSError:
            return None

    def built(self) -> bool:
        return self.root is not None and (self.root / "index.html").is_file()

    def file(self, path: str) -> Path | None:
        """The file `path` (relative to the root, decoded) names, if it is one inside the root;
        400 for a path no file could have."""
        if "\\" in path or "\x00" in path:
            raise Problem(400, "invalid-path", "an app path has no backslash or NUL")
        segments = path.split("/")
        if any(segment in (".", "..") for segment in segments):
            raise Problem(404, "not-found", "no such file of the web app")
        if self.root is None or not path or any(not segment for segment in segments):
            return None
        root = self.root.resolve()
        try:
            found = (root / path).resolve(strict=True)
        except (OSError, RuntimeError):  # missing, a symlink loop, a name too long
            return None
        if not found.is_relative_to(root) or not found.is_file():
            return None
        return found


def accepted_encodings(header: str) -> set[str]:
    """The content codings an Accept-Encoding header accepts (a `q=0` one refused), lower case."""
    accepted = set()
    for item in header.lower().split(","):
        coding, _, parameters = item.partition(";")
        quality = parameters.strip().removeprefix("q=").strip() if "q=" in parameters else "1"
        try:
            refused = float(quality) == 0
        except ValueError:
            refused = False
        if coding.strip() and not refused:
            accepted.add(coding.strip())
    return accepted


def _secured(response: Response) -> Response:
    response.headers.update(SECURITY_HEADERS)
    return response


def _not_found(path: str) -> Response:
    return problem_response(Problem(404, "not-found", f"the web app has no file {path!r}"))


def app_routes(files: AppFiles) -> list[tuple[str, str, Route]]:
    """(path, method, route) of `/`, `/app` and `/app/{path}` (GET; Starlette adds HEAD)."""

    async def root(request: Request) -> Response:
        return RedirectResponse(PREFIX, status_code=307)

    async def app_file(request: Request) -> Response:
        path = request.path_params.get("path", "")
        raw = request.scope.get("raw_path") or request.url.path.encode()
        try:
            if _ENCODED.search(raw.decode("latin-1")):
                raise Problem(400, "invalid-path", "an app path has no encoded slash, backslash or NUL")
            if not files.built():
                return _secured(
                    HTMLResponse(NOT_BUILT, status_code=503, headers={"Cache-Control": "no-store"})
                )
            found = files.file(path)
        except Problem as problem:
            return _secured(problem_response(problem))
        if found is not None:
            cache = IMMUTABLE if path.startswith("assets/") else "no-cache"
            accepted = accepted_encodings(request.headers.get("accept-encoding", ""))
            media = mimetypes.guess_type(found.name)[0] or "application/octet-stream"
            brotli = files.brotli(found) if "br" in accepted else None
            if brotli is not None:
                headers = {"Cache-Control": cache, "Content-Encoding": "br", "Vary": "Accept-Encoding"}
                return _secured(FileResponse(brotli, media_type=media, headers=headers))
            body = files.gzipped(found) if "gzip" in accepted else None
            if body is not None:
                headers = {"Cache-Control": cache, "Content-Encoding": "gzip", "Vary": "Accept-Encoding"}
                return _secured(Response(body, media_type=media, headers=headers))
            return _secured(FileResponse(found, headers={"Cache-Control": cache, "Vary": "Accept-Encoding"}))
        if _ASSET.fullmatch(path.rsplit("/", 1)[-1]):  # looks like a file: no fallback to the app
            return _secured(_not_found(path))
        assert files.root is not None
        return _secured(FileResponse(files.root / "index.html", headers={"Cache-Control": "no-cache"}))

    return [("/", "GET", root), ("/app", "GET", root), ("/app/{path:path}", "GET", app_file)]


__all__ = [
    "CHECKOUT",
    "IMMUTABLE",
    "SECURITY_HEADERS",
    "AppFiles",
    "accepted_encodings",
    "app_routes",
    "web_root",
]
