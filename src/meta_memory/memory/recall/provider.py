"""The recall-provider seam: how the runtime asks for records, and the bundled lexical provider.

A provider receives the raw ``query_text`` and the caller's ``query_terms`` untouched, so a semantic or hybrid
provider can plug in without changing the runtime. The bundled :class:`LexicalRecallProvider` ranks over the
store's term index.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from ..records import Record, Scope, Status
from .analyzer import query_terms as analyze_query
from .scorer import rank

if TYPE_CHECKING:
    from ..store import RealmStore

__all__ = ["LexicalRecallProvider", "RecallProvider", "RecallQuery"]


@dataclass(frozen=True)
class RecallQuery:
    scope: Scope
    selection: str  # "always" | "contextual"
    query_text: str | None
    query_terms: tuple[str, ...]
    max_entries: int


class RecallProvider(Protocol):
    def recall(self, store: RealmStore, query: RecallQuery) -> list[Record]:
        """Active records of ``query.scope``, best first, at most ``query.max_entries``."""
        ...


class LexicalRecallProvider:
    """Contextual recall over the realm store's term index; ``always`` = newest first."""

    def recall(self, store: RealmStore, query: RecallQuery) -> list[Record]:
        if query.selection == "always":
            return store.newest_active(query.scope, query.max_entries)
        terms = analyze_query(query.query_text, list(query.query_terms))
        if not terms:
            return []
        with store.reading_index(query.scope) as index:
            hits = rank(index, terms, query.max_entries)
        by_doc = store.records_by_doc([doc for doc, _ in hits])
        # A record forgotten between ranking and fetching is simply not returned.
        return [by_doc[doc] for doc, _ in hits if doc in by_doc and by_doc[doc].status is Status.ACTIVE]
