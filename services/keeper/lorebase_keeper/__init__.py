"""Keeper: the Domain store (schema, Revisions, branches, Operations, reads, authorization) and the
agent memory store. `api/` holds the gRPC servicers; the logic is one package per concept, each
importing only those below it (docs/architecture.md, "Layers inside keeper")."""
