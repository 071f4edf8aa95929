"""Keeper: the Domain store (schema, Revisions, branches, Operations, reads, authorization)."""
