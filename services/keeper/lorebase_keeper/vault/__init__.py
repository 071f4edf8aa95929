"""The vault: values of `vault: true` Attributes kept out of the data (refs in their place), shown
through `reveal`, and deleted by erasures (docs/erasure.md)."""

from lorebase_keeper.vault.keys import REF, Vault, VaultWriter, has_vault, is_ref
from lorebase_keeper.vault.reveal import reveal, reveal_reply

__all__ = ["REF", "Vault", "VaultWriter", "has_vault", "is_ref", "reveal", "reveal_reply"]
