"""The roster: what the console knows about each identity (mob, role, labels) and its console name.

Attributes come from the ``[[roster]]`` entries of the config first, then from an optional
roster-provider callback the embedding app hands in (``Callable[[str], RosterEntry | None]``,
asked on every lookup, so a live membership can change without a restart). An identity neither
knows is *unknown*: access rules judge its role and label selectors fail-closed. Rules name
identities by their console name, which is the identity itself, or ``<mob>/<identity>`` when one
console serves several mobs (``shared=True``) and the identity's mob is known.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from ..config import RosterEntry
from ..errors import ConfigError

__all__ = ["IdentityAttributes", "Roster", "RosterProvider"]

RosterProvider = Callable[[str], RosterEntry | None]


@dataclass(frozen=True, slots=True)
class IdentityAttributes:
    """A known identity's attributes. ``role=None`` or a missing label is a known absence."""

    identity: str
    mob: str | None = None
    role: str | None = None
    labels: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    @classmethod
    def from_entry(cls, entry: RosterEntry) -> IdentityAttributes:
        return cls(entry.identity, entry.mob, entry.role, MappingProxyType(dict(entry.labels)))


class Roster:
    """Identity attributes from config entries and an optional provider callback."""

    def __init__(
        self,
        entries: Iterable[RosterEntry] = (),
        provider: RosterProvider | None = None,
        *,
        shared: bool = False,
    ) -> None:
        """
        Args:
            entries: the ``[[roster]]`` entries; they win over the provider.
            provider: asked for identities no entry declares; returns an entry or ``None``.
            shared: one console serves several mobs, so identities are named ``<mob>/<identity>``.

        Raises:
            ConfigError: two entries declare the same identity.
        """
        declared: dict[str, IdentityAttributes] = {}
        for entry in entries:
            if entry.identity in declared:
                raise ConfigError(f"roster: identity {entry.identity!r} is declared twice")
            declared[entry.identity] = IdentityAttributes.from_entry(entry)
        self._declared = declared
        self._provider = provider
        self.shared = shared

    def attributes(self, identity: str) -> IdentityAttributes | None:
        """The identity's attributes, or ``None`` when the console does not know it.

        Raises:
            TypeError: the provider answered something other than a ``RosterEntry`` for this
                identity (or ``None``); a wrong answer is a bug, never a guess.
        """
        known = self._declared.get(identity)
        if known is not None or self._provider is None:
            return known
        entry = self._provider(identity)
        if entry is None:
            return None
        if not isinstance(entry, RosterEntry) or entry.identity != identity:
            raise TypeError(
                f"roster provider answered {entry!r} for identity {identity!r}; "
                "it must return a RosterEntry for that identity, or None"
            )
        return IdentityAttributes.from_entry(entry)

    def console_name(self, identity: str, *, mob: str | None = None) -> str | None:
        """The name rules use for ``identity``; ``None`` when it cannot be told.

        On a shared console the name is ``<mob>/<identity>``, with the roster's mob, else the
        ``mob`` the caller knows from the record; with neither, the name is unknown.
        """
        if not self.shared:
            return identity
        return self.resolve(identity, mob=mob)[1]

    def resolve(
        self, identity: str, *, mob: str | None = None
    ) -> tuple[IdentityAttributes | None, str | None]:
        """The identity's attributes and its console name, asking the provider at most once."""
        attrs = self.attributes(identity)
        if not self.shared:
            return attrs, identity
        known_mob = attrs.mob if attrs is not None and attrs.mob is not None else mob
        return attrs, (None if known_mob is None else f"{known_mob}/{identity}")
