"""What every text a caller sends must be, wherever it sits: valid Unicode and free of NUL.

JSON may spell a lone surrogate (``"\\ud800"`` is a legal escape), and a request read with
``surrogatepass`` may carry one as raw bytes; neither can be encoded as UTF-8, so no store,
file or log line could hold it. NUL is meaningless in any field and no database text column
holds one. The dispatcher applies :func:`text_problem` to a request's whole params, and the
``memory`` tool to the arguments an LLM sends as JSON text (a second document the dispatcher
only sees as one string), so a field's text is judged the same way however it arrived.
"""

from __future__ import annotations

from typing import Any

__all__ = ["text_problem"]


def text_problem(value: Any, path: str) -> str | None:
    """The first thing wrong with the strings in ``value`` (a JSON value), as a sentence naming
    the field (``path``, extended by object keys: ``arguments.title``), or ``None``.

    An object's keys are judged as the object's own path; a list's items as the list's. The walk
    keeps its own stack: a document the JSON parser accepted is never too deep to judge.
    """
    pending: list[tuple[Any, str]] = [(value, path)]
    while pending:
        item, where = pending.pop()
        if isinstance(item, str):
            problem = _string_problem(item, where)
            if problem is not None:
                return problem
        elif isinstance(item, dict):
            # Reversed onto the stack, so the fields are judged in the order they were sent.
            for key, inner in reversed(item.items()):
                pending.append((inner, key if where == "params" else f"{where}.{key}"))
                pending.append((key, where))
        elif isinstance(item, list):
            pending.extend((inner, where) for inner in reversed(item))
    return None


def _string_problem(text: str, path: str) -> str | None:
    if "\x00" in text:
        return f"{path} must not contain NUL (U+0000) characters"
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return f"{path} must be valid Unicode text (it holds a lone surrogate)"
    return None
