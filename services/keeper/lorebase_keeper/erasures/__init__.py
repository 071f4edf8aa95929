"""Erasures (docs/erasure.md): deleting the vault values of Records on every branch and Revision,
and forgetting where callers typed them; the list of erasures. Above the Runtime: it reads and
writes through it, while the vault below (vault/) only keeps and reveals values."""

from lorebase_keeper.erasures.erasures import create_erasure, erasure_issues, list_erasures

__all__ = ["create_erasure", "erasure_issues", "list_erasures"]
