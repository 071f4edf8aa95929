"""Context packs (POST /context; seed section 1): the seed Records of one selector, their
neighbourhood, Links, schema, recent changes and lineage, fitted to a token budget."""

from lorebase_keeper.context.budget import SECTIONS, Budget, fit, pack_markdown, section_text, trimmed_whole
from lorebase_keeper.context.pack import Pack, context_pack
from lorebase_keeper.context.sections import assemble, recent_changes, recent_changes_max

__all__ = [
    "SECTIONS",
    "Budget",
    "Pack",
    "assemble",
    "context_pack",
    "fit",
    "pack_markdown",
    "recent_changes",
    "recent_changes_max",
    "section_text",
    "trimmed_whole",
]
