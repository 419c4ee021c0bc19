"""The keyword spellings of the Python API: every snake_case keyword (``max_entries``) also answers
to its camelCase spelling (``maxEntries``), the one the spec's examples and the TypeScript client
use. A call that gives both spellings of one keyword, or a keyword the callable does not take, is
refused with a ``TypeError`` naming them (with the nearest accepted spelling, when one is close).
Type checkers know the snake_case names only; the aliases are for code written from the spec."""

from __future__ import annotations

import difflib
import functools
import inspect
import re
from collections.abc import Callable, Coroutine, Iterable, Mapping
from typing import Any, ParamSpec, TypeVar

__all__ = [
    "Keywords",
    "accepts_aliases",
    "accepts_aliases_async",
    "camel_case",
    "did_you_mean",
    "snake_case",
    "snake_case_keys",
]

P = ParamSpec("P")
R = TypeVar("R")

_BY_KEYWORD = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
_WORD_START = re.compile(r"(?<!^)(?=[A-Z])")


def camel_case(name: str) -> str:
    """``max_entries`` as ``maxEntries``; a name without ``_`` is its own camelCase."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def snake_case(name: str) -> str:
    """``maxEntries`` as ``max_entries``; a snake_case name comes back as it is."""
    return _WORD_START.sub("_", name).lower()


def did_you_mean(key: str, spellings: Iterable[str]) -> str:
    """`` (did you mean 'tags'?)`` for the spelling nearest ``key``; ``""`` when none is near.

    Args:
        key: the keyword given.
        spellings: the keywords accepted.

    Returns:
        The hint, to append to a refusal.
    """
    near = difflib.get_close_matches(key, list(spellings), n=1)
    return f" (did you mean {near[0]!r}?)" if near else ""


def _both(where: str, name: str) -> TypeError:
    return TypeError(f"{where}() got both {name!r} and its alias {camel_case(name)!r}; pass one of them")


class Keywords:
    """The keywords one callable takes: its parameters' snake_case names and their camelCase aliases.

    Args:
        where: the callable's name as a refusal shows it (``recall_agent_memory``).
        names: the names it takes by keyword.
        open_ended: it also takes keywords it does not name (``**options``); those pass through.
    """

    def __init__(self, where: str, names: Iterable[str], *, open_ended: bool = False) -> None:
        self.where = where
        self.names = frozenset(names)
        self.aliases = {camel_case(n): n for n in self.names if camel_case(n) != n}
        self.open_ended = open_ended

    @classmethod
    def of(cls, fn: Callable[..., Any], where: str | None = None) -> Keywords:
        """The keywords of ``fn``'s signature (``self`` left out).

        Args:
            fn: the callable.
            where: its name in refusals (default: its ``__qualname__``).

        Returns:
            Its keywords.
        """
        params = [p for p in inspect.signature(fn).parameters.values() if p.name != "self"]
        return cls(
            where or fn.__qualname__,
            (p.name for p in params if p.kind in _BY_KEYWORD),
            open_ended=any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params),
        )

    def canonical(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """``kwargs`` with each camelCase alias replaced by its snake_case name.

        Args:
            kwargs: the keywords of one call.

        Returns:
            The same keywords under their snake_case names.

        Raises:
            TypeError: both spellings of one keyword were given, or a keyword the callable does
                not take (the message names them).
        """
        if self.names.issuperset(kwargs):  # the common call: snake_case names only
            return kwargs
        out: dict[str, Any] = {}
        unknown: list[str] = []
        for key, value in kwargs.items():
            name = self.aliases.get(key, key)
            if name not in self.names and not self.open_ended:
                unknown.append(key)
            elif name in out:
                raise _both(self.where, name)
            else:
                out[name] = value
        if unknown:
            named = ", ".join(f"{key!r}{did_you_mean(key, self._spellings_like(key))}" for key in unknown)
            many = "unexpected keyword arguments" if len(unknown) > 1 else "an unexpected keyword argument"
            raise TypeError(f"{self.where}() got {many} {named}")
        return out

    def _spellings_like(self, key: str) -> list[str]:
        # A camelCase slip is nearest a camelCase name, a snake_case one nearest a snake_case name.
        names = sorted(self.names)
        return [*names, *self.aliases] if key != key.lower() else names


def accepts_aliases(fn: Callable[P, R]) -> Callable[P, R]:
    """``fn``, also taking its keywords' camelCase aliases (see :class:`Keywords`).

    Args:
        fn: a function or method.

    Returns:
        The wrapped function, with ``fn``'s name, docstring and signature.
    """
    keywords = Keywords.of(fn)
    target: Callable[..., R] = fn

    @functools.wraps(fn)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        return target(*args, **keywords.canonical(kwargs))

    return call


def accepts_aliases_async(
    fn: Callable[P, Coroutine[Any, Any, R]],
) -> Callable[P, Coroutine[Any, Any, R]]:
    """:func:`accepts_aliases` for a coroutine function (the wrapper is one too).

    Args:
        fn: a coroutine function or method.

    Returns:
        The wrapped coroutine function, with ``fn``'s name, docstring and signature.
    """
    keywords = Keywords.of(fn)
    target: Callable[..., Coroutine[Any, Any, R]] = fn

    @functools.wraps(fn)
    async def call(*args: P.args, **kwargs: P.kwargs) -> R:
        return await target(*args, **keywords.canonical(kwargs))

    return call


def snake_case_keys(options: Mapping[str, Any], where: str, table: str = "") -> dict[str, Any]:
    """A mapping of options (and the tables nested in it) under snake_case keys.

    Args:
        options: keys in snake_case or camelCase.
        where: the callable's name as a refusal shows it.
        table: the dotted path of ``options`` inside the outermost mapping (``""`` at the top).

    Returns:
        The same options, every key in snake_case.

    Raises:
        TypeError: one mapping gives two spellings of one key (``max_entries`` and ``maxEntries``).
    """
    out: dict[str, Any] = {}
    for key, value in options.items():
        name = snake_case(key)
        if name in out:
            raise _both(where, f"{table}{name}")
        nested = f"{table}{name}."
        out[name] = snake_case_keys(value, where, nested) if isinstance(value, Mapping) else value
    return out
