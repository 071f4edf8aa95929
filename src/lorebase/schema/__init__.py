"""The schema of a domain: Kinds, Relations, Traits, lenses and Operations, loaded from a document.

`load_schema` reads and checks a schema document (docs/schema.md is its reference); `values` checks
Attribute values, parameters and Record keys against the loaded schema.
"""

from lorebase.schema.durations import parse_duration
from lorebase.schema.errors import SchemaError
from lorebase.schema.loader import load_schema, schema_document
from lorebase.schema.model import (
    ATTRIBUTE_TYPES,
    BUILTINS,
    CARDINALITIES,
    EDIT_OPS,
    LINK_OPS,
    PERMISSIONS,
    RECORD_OPS,
    SENSITIVITIES,
    Attribute,
    DomainSchema,
    Edit,
    Kind,
    Lens,
    Operation,
    Relation,
    Source,
    Trait,
)
from lorebase.schema.policy import Policy, PolicyError, compile_policy
from lorebase.schema.templates import RenderedEdit, parse_template, render_edits
from lorebase.schema.values import (
    Issue,
    Validator,
    canonical_record_key,
    key_values,
    record_key,
    validate_parameters,
    validate_values,
    validator,
)
from lorebase.schema.yaml_text import parse_yaml

__all__ = [
    "ATTRIBUTE_TYPES",
    "BUILTINS",
    "CARDINALITIES",
    "EDIT_OPS",
    "LINK_OPS",
    "PERMISSIONS",
    "RECORD_OPS",
    "SENSITIVITIES",
    "Attribute",
    "DomainSchema",
    "Edit",
    "Issue",
    "Kind",
    "Lens",
    "Operation",
    "Policy",
    "PolicyError",
    "Relation",
    "RenderedEdit",
    "SchemaError",
    "Source",
    "Trait",
    "compile_policy",
    "key_values",
    "load_schema",
    "parse_yaml",
    "parse_duration",
    "parse_template",
    "Validator",
    "canonical_record_key",
    "record_key",
    "render_edits",
    "schema_document",
    "validate_parameters",
    "validate_values",
    "validator",
]
