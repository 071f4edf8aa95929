"""The value types requests are made of: strings without NUL and with a length, bounded integers.

Every string a request carries is bounded and NUL-free (PostgreSQL refuses NUL in text, and a
bound keeps a request from carrying megabytes where a name goes). Names are checked by their own
grammar where they are created (lorebase.names); here they are only kept sane, so that a name
that does not exist answers 404 from keeper rather than 400 from the edge.
"""

from __future__ import annotations

from typing import Annotated, Any

from msgspec import Meta

from lorebase import names

_NO_NUL = r"^[^\x00]*$"
# The end of the string, in Python's regular expressions (msgspec's) and in ECMA's (JSON Schema's)
# alike: Python's `$` also matches before a final newline, which would let "main\n" through.
_END = r"(?![\s\S])"


def bounded(max_length: int, description: str = "", *, min_length: int = 0) -> Meta:
    """The constraints of a string without NUL of at most `max_length` characters:
    `Annotated[str, bounded(255)]`."""
    return Meta(
        min_length=min_length, max_length=max_length, pattern=_NO_NUL, description=description or None
    )


def written(max_length: int, description: str) -> Meta:
    """The constraints of a text a person or agent writes (a title, a note, a reason): 1 to
    `max_length` characters without NUL, not only whitespace (`\\S` as Python reads it, the
    characters keeper's `str.strip` keeps; ECMA's differs only on U+001C-U+001F, U+0085 and U+FEFF)."""
    return Meta(
        min_length=1, max_length=max_length, pattern=r"^(?=[\s\S]*\S)[^\x00]*$", description=description
    )


def matching(pattern: str, description: str) -> Meta:
    """The constraints of a string that `pattern` matches whole (an id of a known shape)."""
    return Meta(pattern=f"^(?:{pattern}){_END}", description=description)


def grammar(rule: names.NameRule, description: str, *, empty: bool = False) -> Meta:
    """The constraints of a name following its grammar (lorebase.names), as a JSON Schema pattern;
    `empty`: the empty string too (a parameter left out)."""
    extra = r"(?!.*\.\.)(?!.*\.lock$)" if rule.path else ""
    pattern = f"^{extra}(?:{rule.pattern.pattern}){_END}"
    if empty:
        pattern = f"^(?:{_END}|{pattern[1:]})"
    return Meta(
        min_length=0 if empty else 1, max_length=rule.max_length, pattern=pattern, description=description
    )


NewBranchName = Annotated[str, grammar(names.BRANCH, "A branch name: " + names.BRANCH.hint)]
NewDomainName = Annotated[str, grammar(names.DOMAIN, "A Domain name: " + names.DOMAIN.hint)]
PrincipalId = Annotated[
    str, grammar(names.PRINCIPAL, "A principal id (usr_…, agt_…): " + names.PRINCIPAL.hint)
]
Tenant = Annotated[str, grammar(names.TENANT, "A tenant: " + names.TENANT.hint)]

Text = Annotated[str, Meta(max_length=65536, pattern=_NO_NUL)]
ShortText = Annotated[str, Meta(max_length=4096, pattern=_NO_NUL)]
Name = Annotated[str, Meta(min_length=1, max_length=512, pattern=_NO_NUL, description="A name or key")]
OptionalName = Annotated[str, Meta(max_length=512, pattern=_NO_NUL)]
DomainName = Annotated[str, Meta(min_length=1, max_length=63, pattern=_NO_NUL, description="A Domain name")]
# A branch named in a read or a write: its grammar, since keeper refuses (400) any other.
BranchRef = Annotated[
    str, grammar(names.BRANCH, "A branch name; empty: the Domain's default branch", empty=True)
]
SessionId = Annotated[str, grammar(names.SESSION, "An agent session id: " + names.SESSION.hint)]
# A Revision named in a read: its id, a prefix of 12 or more hex digits, or a tag (hex digits are a
# tag's grammar too); which one it names depends on what exists (an ambiguous prefix: 400).
RevisionRef = Annotated[
    str,
    grammar(names.TAG, "A Revision id (or a unique prefix) or a tag; empty: the head", empty=True),
]
# expected_head: the head a write expects (a tag is a read's name for a Revision, not a head).
HeadRef = Annotated[
    str,
    Meta(max_length=128, pattern=_NO_NUL, description="A Revision id (or a unique prefix); empty: the head"),
]
Cursor = Annotated[
    str, Meta(max_length=4096, pattern=_NO_NUL, description="The next_cursor of the page before")
]
Limit = Annotated[int, Meta(ge=0, le=2_147_483_647, description="Page size; 0: the default")]
Count = Annotated[int, Meta(ge=0, le=2_147_483_647)]
Format = Annotated[str, Meta(max_length=16, pattern=_NO_NUL, description="json (default) or markdown")]
IdempotencyKey = Annotated[
    str,
    Meta(
        max_length=255, pattern=r"^[\x21-\x7e]*" + _END, description="Retries with the same key commit once"
    ),
]
Names = Annotated[list[Name], Meta(max_length=1000)]
# An idempotency key sent in the body is not empty (the header's may be: an empty header is no key).
BodyKey = Annotated[IdempotencyKey, Meta(min_length=1)]
# An embedding or a query vector: finite numbers (JSON has no others; msgspec refuses overflows).
# pgvector stores single-precision numbers: a component beyond float32's range is refused here.
FLOAT32_MAX = 3.4028234663852886e38
Component = Annotated[float, Meta(ge=-FLOAT32_MAX, le=FLOAT32_MAX)]
Vector = Annotated[
    list[Component],
    Meta(
        min_length=1,
        max_length=4096,
        description="1 to 4096 numbers, each within single precision, not all zero (a direction)",
        extra_json_schema={"contains": {"not": {"const": 0}}},
    ),
]
Document = dict[str, Any]  # a JSON object whose shape the schema document decides

__all__ = [
    "NewBranchName",
    "NewDomainName",
    "PrincipalId",
    "Tenant",
    "bounded",
    "grammar",
    "matching",
    "BodyKey",
    "BranchRef",
    "Count",
    "Cursor",
    "Document",
    "DomainName",
    "Format",
    "HeadRef",
    "IdempotencyKey",
    "Limit",
    "Name",
    "Names",
    "OptionalName",
    "RevisionRef",
    "SessionId",
    "ShortText",
    "Text",
    "Vector",
]
