"""Tags: immutable names of Revisions (docs/branches.md#tags).

A tag names one Revision of the Domain, on any branch, and never moves; every read that takes a
Revision in `at`, `since`, `from` or `to` takes a tag's name there (keeper resolves it in one place,
lorebase_store.refs). Creating needs tag.create and deleting tag.delete on the branch of the
Revision; reading needs data.read there.
"""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

from lorebase import names
from lorebase.contract import answers
from lorebase.contract._base import DOMAIN, Body
from lorebase.contract.endpoint import Endpoint, Path, Query, Request
from lorebase.contract.fields import Cursor, DomainName, grammar, matching
from lorebase.contract.policy import Need, P, Scope, Target, grant

NewTagName = Annotated[str, grammar(names.TAG, "A tag name: " + names.TAG.hint)]
TagRef = Annotated[str, Meta(min_length=1, max_length=255, pattern=r"^[^\x00]*$", description="A tag name")]
RevisionToTag = Annotated[
    str,
    matching(r"[0-9a-f]{12,64}", "The Revision to tag: its id, or a unique prefix of 12 or more hex digits"),
]


class NewTag(Body, frozen=True, kw_only=True):
    name: NewTagName
    revision: RevisionToTag


class CreateTag(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    body: NewTag


class ListTags(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    limit: Annotated[Annotated[int, Meta(ge=0, le=200, description="Page size; 0: 50")], Query] = 0
    cursor: Annotated[Cursor, Query] = ""


class TagCall(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    tag: Annotated[TagRef, Path]


TAGS = DOMAIN + "/tags"
TAG = TAGS + "/{tag:path}"

ENDPOINTS = [
    Endpoint(
        "create_tag",
        "POST",
        TAGS,
        "keeper",
        "CreateTag",
        CreateTag,
        "Name a Revision with a tag (immutable; usable wherever a Revision is: at, since, from, to)",
        "tags",
        policy=grant(
            Need(P.TAG_CREATE, "revision"),
            Need(P.DATA_READ, "revision"),
            scope=Scope.TARGET,
            target=Target.REVISION,
        ),
        success=201,
        problems=(404, 409),
        response=answers.schema.Tag,
    ),
    Endpoint(
        "list_tags",
        "GET",
        TAGS,
        "keeper",
        "ListTags",
        ListTags,
        "The tags of a Domain, newest first",
        "tags",
        policy=grant(),
        response=answers.schema.TagList,
    ),
    Endpoint(
        "get_tag",
        "GET",
        TAG,
        "keeper",
        "GetTag",
        TagCall,
        "A tag and the Revision it names",
        "tags",
        policy=grant(Need(P.DATA_READ, "tag"), scope=Scope.TARGET, target=Target.TAG),
        problems=(404,),
        response=answers.schema.Tag,
    ),
    Endpoint(
        "delete_tag",
        "DELETE",
        TAG,
        "keeper",
        "DeleteTag",
        TagCall,
        "Delete a tag (the Revision stays; the name is free again)",
        "tags",
        policy=grant(Need(P.TAG_DELETE, "tag"), scope=Scope.TARGET, target=Target.TAG),
        success=204,
        problems=(404,),
        media_types=(),  # 204 No Content
    ),
]

__all__ = ["ENDPOINTS", "CreateTag", "ListTags", "NewTag", "TagCall"]
