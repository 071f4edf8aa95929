"""Branches: create one from another's head (a copy or an overlay), list, read, protect and delete
them (docs/branches.md); tags, the immutable names of their Revisions (tags.py). Their state inside a commit is writes/view.py; merging them is merge/."""

from lorebase_keeper.branches.branches import (
    create_branch,
    delete_branch,
    describe_branch,
    fork_branch,
    get_branch,
    list_branches,
    remove_branch,
    update_branch,
)
from lorebase_keeper.branches.tags import (
    create_tag,
    delete_tag,
    describe_tag,
    find_tag,
    list_tags,
    revision_to_tag,
)

__all__ = [
    "create_tag",
    "delete_tag",
    "find_tag",
    "revision_to_tag",
    "describe_tag",
    "list_tags",
    "create_branch",
    "delete_branch",
    "describe_branch",
    "fork_branch",
    "get_branch",
    "list_branches",
    "remove_branch",
    "update_branch",
]
