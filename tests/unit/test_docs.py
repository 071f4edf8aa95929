"""What docs/*.md and the README claim about the code, where a claim can be checked mechanically:
the generated reference is current, every route they name is served, the members and parameters
docs/rest.md names for an endpoint are its declaration's, every setting and environment variable
they name exists, and every file and module they name is there."""

from __future__ import annotations

import fnmatch
import importlib
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import msgspec

from lorebase.contract import ENDPOINTS, Endpoint
from lorebase.contract.openapi import document
from lorebase.settings_model import LorebaseSettings

ROOT = Path(__file__).resolve().parents[2]
DOCS = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
METHOD = r"(?:GET|POST|PUT|PATCH|DELETE)"
# `POST /api/v1/...`, `GET …/schema`, `POST /proposals/{p}/merge`; `POST/GET …/webhooks` names two
ROUTE = re.compile(rf"\b({METHOD}(?:/{METHOD})*)\s+(…?/[^\s`|)\]]*)")
# Served, but not declared endpoints (each with what serves it).
NOT_DECLARED = {
    "/openapi.json": "the gateway: the contract",
    "/docs": "the gateway: the contract's page",
    "/metrics": "every service's metrics listener",
    "/varz": "NATS's own monitoring port",
    "/": "the gateway: redirects to the web app",
    "/app/": "the gateway: the web app's files (lorebase_gateway.web_app)",
}


def _lines() -> list[tuple[str, int, str]]:
    return [
        (path.relative_to(ROOT).as_posix(), number, line)
        for path in DOCS
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
    ]


def _pattern(template: str) -> str:
    return "".join(
        "[^/]+"
        if part.startswith("{") and not part.endswith(":path}")
        else ".+"
        if part.startswith("{")
        else re.escape(part)
        for part in re.split(r"(\{[^}]*\})", template)
    )


def endpoints_at(method: str, path: str) -> list[Endpoint]:
    """The declared endpoints a route named in prose means: `path` in full (`/api/v1/…`, `/health`)
    or its end (`…/imports`, `/proposals/{p}/merge`); `{anything}` in it stands for a parameter."""
    path = path.split("?")[0].rstrip(".,:;")
    relative = not path.startswith(("/api/", "/health"))
    named = re.sub(r"\{[^}]*\}", "X", path.lstrip("…"))
    found = []
    for endpoint in ENDPOINTS:
        if endpoint.method != method:
            continue
        if relative:
            doc = "".join("[^/]+" if p == "X" else re.escape(p) for p in re.split(r"(X)", named))
            hit = re.search(doc + "$", endpoint.openapi_path) is not None
        else:
            hit = re.fullmatch(_pattern(endpoint.path), named) is not None
        if hit:
            found.append(endpoint)
            if not relative:  # the gateway's router: the first declared route that matches
                break
    return found


def test_the_generated_reference_is_current() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_rest_docs.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_route_the_docs_name_is_served() -> None:
    wrong = []
    for doc, number, line in _lines():
        for methods, path in ROUTE.findall(line):
            if path.split("?")[0].rstrip(".,:;") in NOT_DECLARED:
                continue
            for method in methods.split("/"):
                if not endpoints_at(method, path):
                    wrong.append(f"{doc}:{number}: {method} {path}")
    assert wrong == [], "routes that are not declared (lorebase.contract):\n" + "\n".join(wrong)


def _members(endpoint: Endpoint) -> set[str]:
    if isinstance(endpoint.body, type) and issubclass(endpoint.body, msgspec.Struct):
        return {f.encode_name for f in msgspec.structs.fields(endpoint.body)}
    return set()


def _sections() -> list[tuple[int, str, str, list[str]]]:
    """docs/rest.md's sections headed by one route: (line, method, path with its query, body lines)."""
    sections: list[tuple[int, str, str, list[str]]] = []
    heading = re.compile(rf"^###+ `({METHOD}) ([^`]+)`$")
    for number, line in enumerate((ROOT / "docs" / "rest.md").read_text(encoding="utf-8").splitlines(), 1):
        found = heading.match(line)
        if found:
            sections.append((number, found.group(1), found.group(2), []))
        elif line.startswith("#"):
            sections.append((number, "", "", []))
        elif sections:
            sections[-1][3].append(line)
    return [s for s in sections if s[1]]


# Answers rest.md describes that the declaration does not list yet, each with why it is here.
UNDECLARED_ANSWERS = {
    (
        "execute_operation",
        "202",
    ): "a task write that opens a Proposal answers 202; writes.py declares only 200",
}
KEYS = re.compile(r"[{,]\s*\"(\w+)\"")
MEMBER_ROW = re.compile(r"^\| `(\w+)` \|")


def test_rest_md_names_the_declared_members_and_parameters() -> None:
    """In a section headed by a route, the answers in bold (`**201**`) are statuses its declaration
    lists, and the query parameters of the heading, the members of a
    `Body: {"a", "b"}` line and of a `| member |` table are the endpoint's; so are the members after
    a route in a table row (`POST /proposals` `{"source", …}`) anywhere in rest.md."""
    wrong = []
    for number, method, path, body in _sections():
        (endpoint,) = endpoints_at(method, path) or [None]  # type: ignore[list-item]
        if endpoint is None:
            wrong.append(f"rest.md:{number}: {method} {path} is not declared")
            continue
        query = {p.alias for p in endpoint.parameters if p.where == "query"}
        for name in re.findall(r"[?&](\w+)=", path):
            if name not in query:
                wrong.append(f"rest.md:{number}: ?{name}= is not a parameter of {endpoint.name}")
        answers = set(document()["paths"][endpoint.openapi_path][endpoint.method.lower()]["responses"])
        for status in re.findall(r"\*\*(\d{3})\b", "\n".join(body)):
            excused = (endpoint.name, status) in UNDECLARED_ANSWERS
            if status not in answers and not excused:
                wrong.append(f"rest.md:{number}: {endpoint.name} answers {status}, not in its declaration")
            elif status in answers and excused:
                wrong.append(f"{endpoint.name} declares {status} now: remove it from UNDECLARED_ANSWERS")
        members = _members(endpoint)
        in_table = False
        for line in body:
            if line.startswith("Body:"):
                named = KEYS.findall(line.split("`")[1]) if "`{" in line else []
                wrong += [
                    f"rest.md:{number}: {n} is not a member of {endpoint.name}"
                    for n in named
                    if n not in members
                ]
            in_table = line.startswith("| member |") or (in_table and line.startswith("|"))
            row = MEMBER_ROW.match(line)
            if in_table and row and row.group(1) not in members:
                wrong.append(f"rest.md:{number}: {row.group(1)} is not a member of {endpoint.name}")
    inline = re.compile(rf"`({METHOD}) ([^`\s]+)` `(\{{[^`]*\}})`")
    for doc, number, line in _lines():
        if doc != "docs/rest.md":
            continue
        for method, path, keys in inline.findall(line):
            for endpoint in endpoints_at(method, path):
                wrong += [
                    f"rest.md:{number}: {n} is not a member of {endpoint.name}"
                    for n in KEYS.findall(keys)
                    if n not in _members(endpoint)
                ]
    assert wrong == [], "\n".join(wrong)


@cache
def setting_paths() -> frozenset[str]:
    paths: set[str] = set()

    def walk(model: type[msgspec.Struct], prefix: str) -> None:
        for field in msgspec.structs.fields(model):
            path = prefix + field.name
            paths.add(path)
            if isinstance(field.type, type) and issubclass(field.type, msgspec.Struct):
                walk(field.type, path + ".")

    walk(LorebaseSettings, "")
    return frozenset(paths)


def is_setting(name: str) -> bool:
    """`read.query.max_limit`, a section, or a pattern (`read.*.max_limit`, `*.shutdown_grace_s`)."""
    return any(fnmatch.fnmatchcase(path, name) for path in setting_paths())


def test_every_section_and_setting_of_settings_md_exists() -> None:
    """Its sections table names every section of the model, and each setting a row lists is the
    section's (or a setting of each of its parts: `services`' `listen`)."""
    text = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    sections = re.findall(r"^\| `([a-z_.]+)` \| (.*) \|$", text, flags=re.M)
    wrong = []
    listed = set()
    for section, row in sections:
        if section not in setting_paths():
            wrong.append(f"section {section}")
            continue
        listed.add(section)
        settings_cell = re.sub(r"\([^()]*\)", "", row.split(" | ")[0])
        for name in re.findall(r"`([a-z_]+(?:\.[a-z_]+)*\*?)`", settings_cell):
            if (
                section != "data_dir"
                and not is_setting(f"{section}.{name}")
                and not is_setting(f"{section}.*.{name}")
            ):
                wrong.append(f"{section}.{name}")
    for field in msgspec.structs.fields(LorebaseSettings):
        model = field.type
        struct = isinstance(model, type) and issubclass(model, msgspec.Struct)
        children = [f.name for f in msgspec.structs.fields(model)] if struct else []
        if field.name not in listed and not any(f"{field.name}.{c}" in listed for c in children):
            wrong.append(f"{field.name}: not in the sections table")
    assert wrong == [], "docs/settings.md names what the settings model does not have: " + ", ".join(wrong)


# Dotted names that look like settings but are something else.
NOT_SETTINGS = {
    "nats.lorebase.svc.cluster.local": "the NATS release's Service (deploy/helm/nats-values.yaml)",
    "webhooks.start_after": "a column of the webhooks table",
    "agents.feed.heartbaet_s": "the misspelt key of an error message's example",
}
SECTIONS = "|".join(f.name for f in msgspec.structs.fields(LorebaseSettings))
SETTING = re.compile(rf"(?<![\w./<-])((?:{SECTIONS})(?:\.(?:[a-z_*]+|<[a-z]+>))+)(?![\w/<>-]|\.[a-z])")
FILES = (".md", ".py", ".proto", ".conf", ".token", ".log", ".yaml", ".key", ".json")


def test_every_setting_the_docs_name_exists() -> None:
    """A dotted name that starts with a section of the settings (`read.query.max_limit`,
    `services.<name>.listen`, `read.*.max_limit`) is a setting of the model."""
    wrong = []
    for doc, number, line in _lines():
        for name in SETTING.findall(line):
            name = name.rstrip(".")
            if name in NOT_SETTINGS or name.endswith(FILES):
                continue
            if not is_setting(re.sub(r"<[a-z]+>", "*", name)):
                wrong.append(f"{doc}:{number}: {name}")
    assert wrong == [], "settings the model does not have (lorebase.settings_model):\n" + "\n".join(wrong)


# Environment variables named in the docs that are no setting and no variable the code reads.
NOT_READ = {"LOREBASE_AGENTS__FEED__HEARTBAET_S": "the misspelt key of an error message's example"}


def test_every_environment_variable_the_docs_name_is_read() -> None:
    """`LOREBASE_<SECTION>__<KEY>` names a setting; any other `LOREBASE_*` is read by the code."""
    code = "\n".join(
        p.read_text(encoding="utf-8")
        for folder in ("src", "services", "tests", "bench", "examples")
        for p in (ROOT / folder).rglob("*.py")
    )
    wrong = []
    for doc, number, line in _lines():
        for name in re.findall(r"\bLOREBASE_[A-Z0-9_]*[A-Z0-9]\b", line):
            if name in NOT_READ:
                continue
            if "__" in name:
                if not is_setting(name.removeprefix("LOREBASE_").lower().replace("__", ".")):
                    wrong.append(f"{doc}:{number}: {name}")
            elif f'"{name}"' not in code and f"'{name}'" not in code:
                wrong.append(f"{doc}:{number}: {name}")
    assert wrong == [], "environment variables no code reads:\n" + "\n".join(wrong)


FOLDERS = ("src", "services", "tests", "deploy", "scripts", "docs", "config", "examples", "protos", "bench")
PATH = re.compile(rf"`((?:{'|'.join(FOLDERS)})/[^`\s]*)`")
DOTTED = re.compile(r"`(lorebase(?:_[a-z]+)?(?:\.[A-Za-z_][A-Za-z0-9_]*)+)`")
# Dotted names in the docs that are not Python: NATS subjects, logger names, gRPC services.
NOT_PYTHON = re.compile(r"^lorebase\.((events|domains)\.|v1\.[A-Z]|(keeper|feed|scribe|gateway)(\.relay)?$)")


def _resolves(name: str) -> bool:
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(found, attribute):
                return False
            found = getattr(found, attribute)
        return True
    return False


def test_every_file_and_module_the_docs_name_exists() -> None:
    wrong = []
    for doc, number, line in _lines():
        for path in PATH.findall(line):
            path = re.split(r"[:#]", path.rstrip(".,;"))[0]
            pattern = re.sub(r"<[^>]*>|…", "*", path)
            if not (list(ROOT.glob(pattern)) if "*" in pattern else (ROOT / path).exists()):
                wrong.append(f"{doc}:{number}: {path}")
        for name in DOTTED.findall(line):
            if (
                not NOT_PYTHON.match(name)
                and not name.endswith((".yaml", ".md", ".py"))
                and not _resolves(name)
            ):
                wrong.append(f"{doc}:{number}: {name}")
    assert wrong == [], "files or modules that are not there:\n" + "\n".join(wrong)
