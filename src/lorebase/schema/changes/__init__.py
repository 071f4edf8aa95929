"""Schema change sets: a list of changes applied to a schema document, and what they ask of the data.

A change set (docs/schema.md, "Changing a schema") is a list of items, each with an `op`:

| op | members | what it does to the document | what it asks of the data |
| --- | --- | --- | --- |
| add_kind | kind, definition | adds the Kind | nothing |
| rename_kind | kind, to | renames it, and in Relations' ends, lenses, Operations' edits and Sources | each Record moves to the new name with its key, values, provenance and creation |
| change_kind | kind, definition | sets description, title, aliases, stewards | nothing |
| remove_kind | kind, delete_data | removes the Kind | its Records deleted (only with `delete_data`) |
| add_attribute | kind, attribute, definition, backfill | adds the Attribute | the backfill written |
| rename_attribute | kind, attribute, to | renames it, and in the Kind's key, title and the Operations writing it | each value moved, with its provenance |
| remove_attribute | kind, attribute | removes it | its values dropped |
| change_attribute | kind, attribute, definition, map | merges the members (type, values, bounds, pattern, required, unique, aliases, value_aliases...) | each value converted (through `map` first), or reported |
| add_relation | relation, definition | adds the Relation | nothing |
| change_relation | relation, definition, map | sets description, cardinality, required_from, attributes (link Attributes) | its Links checked again (cardinality, required_from), their values converted to the link Attributes (through `map` first) or reported, dropped link values removed |
| rename_relation | relation, to, inverse | renames it (and its inverse when given), and in lenses and Operations' edits | each Link moves to the new name with its values and provenance |
| remove_relation | relation, delete_data | removes it | its Links deleted (only with `delete_data`) |
| put_operation / remove_operation | operation, definition | sets or removes an Operation | nothing |
| put_lens / remove_lens | lens, definition | sets or removes a lens | nothing |
| add_trait | trait, definition | adds the Trait | nothing |
| rename_trait | trait, to | renames it, and in Kinds' `implements` and lenses' `traits` | nothing |
| change_trait | trait, definition | sets description, attributes (each implementing Kind must still declare them) | nothing |
| remove_trait | trait | removes it, and from Kinds' `implements` (they keep their Attributes) and lenses' `traits` | nothing |
| split_attribute | kind, attribute, pattern, into | removes the Attribute, adds each of `into` | each new value is its named group of `pattern` over the old value |
| merge_attributes | kind, attributes, to, definition, backfill | removes the Attributes, adds `to` | its value is the backfill's expression over the old values |

`apply_changes` checks every item against the document as the items before it left it, then loads
the result (every rule of the schema document holds); every problem comes back at once, by the
item's path (`changes[2].to`). Nothing here reads data: keeper migrates the Records
(lorebase_keeper.schema_changes) with the `Plan`.

The ops are methods of one class per resource (kinds.py, attributes.py, backfills.py for the
values a change computes, relations.py, traits.py for Traits, Operations and lenses), over the
document and lookups of _base.py; plan.py holds what the change set asks of the data.
"""

from lorebase.schema.changes._base import OPS
from lorebase.schema.changes.apply import apply_changes
from lorebase.schema.changes.diff import schema_diff
from lorebase.schema.changes.kept import kept_items, kept_on_invalid, sent_items
from lorebase.schema.changes.plan import Backfill, Computed, KindMigration, Plan, SchemaChangeError

__all__ = [
    "OPS",
    "Backfill",
    "Computed",
    "KindMigration",
    "Plan",
    "SchemaChangeError",
    "apply_changes",
    "kept_items",
    "kept_on_invalid",
    "schema_diff",
    "sent_items",
]
