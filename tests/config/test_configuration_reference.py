"""docs/configuration.md is the config models, written out: every key of every section (walked from
``MetaConfig`` through nested sections and lists of entries) has a row, every row is a real key,
every stated default is the model's default, every stated range and choice is what the key's own
validator keeps, and every refusal it quotes is the message the loader gives.

The page's format, which this test reads: a section is a heading ``### [section.sub]`` (``### [[x]]``
for an array of tables) followed by a table whose first column is the key in backticks; the default
column holds a TOML value in backticks, ``unset`` or ``required``; the allowed column, when it is
exactly a backticked ``lo..hi`` or backticked TOML values joined by ``|`` (written ``\\|``), is
checked, and free text otherwise. The refusals are the two-column table under ``## What a wrong
value gets``.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic.fields import FieldInfo

from meta_memory.config import DEFAULT_CONFIG, MetaConfig, load_config_dict
from meta_memory.errors import MetaError
from meta_memory.runtime import MetaRuntime

DOC_PATH = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"
DOC = DOC_PATH.read_text()

SECTION_HEADING = re.compile(r"### (\[\[?)([a-z_.]+)(\]\]?)")
RANGE = re.compile(r"`(-?\d+)\.\.(-?\d+)`")
CHOICES = re.compile(r"`[^`]+`(?: \| `[^`]+`)*")
NOT_A_CHOICE = "not-a-choice"


# -- the models ------------------------------------------------------------------------------------


def _sub_model(annotation: Any) -> tuple[type[BaseModel] | None, bool]:
    """The section model a field holds (``None`` for a plain key), and whether it is a list of them."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, False
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Annotated:
        return _sub_model(args[0])
    if origin is tuple and args and isinstance(args[0], type) and issubclass(args[0], BaseModel):
        return args[0], True
    if origin in (typing.Union, types.UnionType):
        for arg in args:
            model, many = _sub_model(arg)
            if model is not None:
                return model, many
    return None, False


def _toml_key(name: str, field: FieldInfo) -> str:
    alias = field.validation_alias if isinstance(field.validation_alias, str) else field.alias
    return alias or name


@dataclass(frozen=True)
class Section:
    is_list: bool
    keys: dict[str, FieldInfo]


def model_sections(model: type[BaseModel] = MetaConfig, path: str = "") -> dict[str, Section]:
    """Every section that holds keys, by dotted name: ``{"agent_memory.steward": Section(...)}``."""
    found: dict[str, Section] = {}
    keys: dict[str, FieldInfo] = {}
    for name, field in model.model_fields.items():
        key = _toml_key(name, field)
        sub, many = _sub_model(field.annotation)
        if sub is None:
            keys[key] = field
            continue
        child = f"{path}.{key}" if path else key
        for sub_name, section in model_sections(sub, child).items():
            found[sub_name] = Section(True, section.keys) if sub_name == child and many else section
    if keys:
        found[path] = Section(False, keys)
    return found


MODEL = model_sections()


# -- the page --------------------------------------------------------------------------------------


def cells(line: str) -> list[str]:
    """A table row's cells, with ``\\|`` (a pipe inside a cell) read back as ``|``."""
    inner = line.strip().removeprefix("|").removesuffix("|")
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", inner)]


def code(cell: str) -> str | None:
    """The text of a cell that is exactly one code span (CommonMark: one space is stripped from both
    ends when both have one), else ``None``."""
    match = re.fullmatch(r"(`+)(.+?)\1", cell)
    if match is None or match.group(1) in match.group(2):
        return None  # not one code span: "`a` or `b`"
    text = match.group(2)
    return text[1:-1] if text.startswith(" ") and text.endswith(" ") and text.strip() else text


@dataclass(frozen=True)
class Row:
    section: str
    key: str
    type: str
    default: str
    allowed: str

    @property
    def name(self) -> str:
        return f"{self.section}.{self.key}"


def doc_sections(text: str = DOC) -> tuple[dict[str, bool], list[Row]]:
    """The section headings (name → is it ``[[...]]``) and every key row under them."""
    headings: dict[str, bool] = {}
    rows: list[Row] = []
    current: str | None = None
    for line in text.splitlines():
        if line.startswith("#"):
            match = SECTION_HEADING.fullmatch(line.strip())
            current = None
            if match is not None:
                opening, name, closing = match.groups()
                assert len(opening) == len(closing), f"unbalanced heading {line!r}"
                assert name not in headings, f"section [{name}] is documented twice"
                headings[name] = opening == "[["
                current = name
            continue
        if current is None or not line.startswith("|"):
            continue
        row = cells(line)
        if row[0] == "Key" or set(row[0]) <= {"-", ":", " "}:
            continue
        assert len(row) == 5, f"[{current}]: a key row has five cells: {line!r}"
        key = code(row[0])
        assert key is not None, f"[{current}]: the key column holds the key in backticks: {line!r}"
        rows.append(Row(current, key, row[1], row[2], row[3]))
    return headings, rows


HEADINGS, ROWS = doc_sections()
DOCUMENTED = {row.name: row for row in ROWS}


def _field(row: Row) -> FieldInfo:
    return MODEL[row.section].keys[row.key]


def _plain(value: Any) -> Any:
    """A model value as TOML reads it back (tuples are arrays)."""
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _toml_value(text: str) -> Any:
    return tomllib.loads(f"value = {text}")["value"]


def _adapter(field: FieldInfo) -> TypeAdapter[Any]:
    """Validates one key alone: its type and its own validators, none of its section's rules."""
    annotation: Any = field.annotation
    if field.metadata:
        annotation = Annotated[(annotation, *field.metadata)]
    return TypeAdapter(annotation)


def _accepts(field: FieldInfo, value: Any) -> bool:
    try:
        _adapter(field).validate_python(value)
    except (ValidationError, ValueError):
        return False
    return True


# -- keys: documented, real, and their defaults ---------------------------------------------------


def test_the_page_documents_sections_and_keys() -> None:
    assert len(HEADINGS) >= 15 and len(ROWS) >= 60


def test_every_key_of_every_section_is_documented() -> None:
    missing = [
        f"{name}.{key}"
        for name, section in MODEL.items()
        for key in section.keys
        if f"{name}.{key}" not in DOCUMENTED
    ]

    assert missing == [], f"docs/configuration.md does not document: {', '.join(missing)}"


def test_every_documented_section_is_a_section_of_the_config_with_its_own_brackets() -> None:
    wrong = []
    for name, is_list in HEADINGS.items():
        if name not in MODEL:
            wrong.append(f"[{name}] is not a section of the config")
        elif MODEL[name].is_list != is_list:
            wrong.append(f"[{name}] is written {'[[...]]' if MODEL[name].is_list else '[...]'} in a config")

    assert wrong == []


def test_every_documented_key_is_a_key_of_its_section() -> None:
    stale = [row.name for row in ROWS if row.section in MODEL and row.key not in MODEL[row.section].keys]

    assert stale == [], f"docs/configuration.md documents keys the config does not have: {', '.join(stale)}"


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.name)
def test_the_documented_default_is_the_models_default(row: Row) -> None:
    field = _field(row)
    if row.default == "required":
        assert field.is_required(), f"{row.name} is optional, default {field.get_default()!r}"
        return
    assert not field.is_required(), f"{row.name} is required"
    default = field.get_default(call_default_factory=True)
    if row.default == "unset":
        assert default is None, f"{row.name} defaults to {default!r}"
        return
    written = code(row.default)
    assert written is not None, f"{row.name}: the default is a TOML value in backticks, unset or required"

    assert _toml_value(written) == _plain(default)


RANGED = [row for row in ROWS if RANGE.fullmatch(row.allowed)]
CHOSEN = [row for row in ROWS if CHOICES.fullmatch(row.allowed) and not RANGE.fullmatch(row.allowed)]


def test_ranges_and_choices_are_stated_where_the_config_has_them() -> None:
    assert len(RANGED) >= 10 and len(CHOSEN) >= 20


@pytest.mark.parametrize("row", RANGED, ids=lambda row: row.name)
def test_a_documented_range_is_the_range_the_key_accepts(row: Row) -> None:
    match = RANGE.fullmatch(row.allowed)
    assert match is not None
    lo, hi = int(match.group(1)), int(match.group(2))
    field = _field(row)

    assert [_accepts(field, v) for v in (lo - 1, lo, hi, hi + 1)] == [False, True, True, False]


@pytest.mark.parametrize("row", CHOSEN, ids=lambda row: row.name)
def test_documented_choices_are_accepted_and_anything_else_refused(row: Row) -> None:
    field = _field(row)
    choices = [_toml_value(v) for v in re.findall(r"`([^`]+)`", row.allowed)]

    assert [v for v in choices if not _accepts(field, v)] == []
    assert not _accepts(field, NOT_A_CHOICE)


# -- refusals, the default, the examples ---------------------------------------------------------


def _section_text(heading: str) -> str:
    start = DOC.index(f"\n{heading}\n")
    end = DOC.find("\n## ", start + 1)
    return DOC[start : end if end != -1 else len(DOC)]


def _placeholders(text: str) -> str:
    """Every ``"<...>"`` placeholder as a token hash: the same placeholder, the same hash."""
    return re.sub(r'"<[^">]*>"', lambda m: '"' + hashlib.sha256(m.group(0).encode()).hexdigest() + '"', text)


def refusals() -> Iterator[tuple[str, str]]:
    for line in _section_text("## What a wrong value gets").splitlines():
        if not line.startswith("|"):
            continue
        config, refusal = (code(c) for c in cells(line))
        if config is None or refusal is None:
            continue
        yield config, refusal


REFUSALS = list(refusals())


def test_the_page_quotes_refusals() -> None:
    assert len(REFUSALS) >= 30


@pytest.mark.parametrize(("config", "refusal"), REFUSALS, ids=[c for c, _ in REFUSALS])
def test_each_quoted_refusal_is_the_message_the_config_gets(
    config: str, refusal: str, tmp_path: Path
) -> None:
    data = tomllib.loads(_placeholders(config))
    try:
        loaded = load_config_dict(data, source="meta.toml")
        # Read without complaint: the rest are refused when the runtime boots.
        MetaRuntime.open(tmp_path / "state", loaded).close()
    except MetaError as exc:
        assert exc.message == refusal
    else:
        pytest.fail(f"{config!r} was accepted")


def _toml_blocks(text: str) -> list[str]:
    return re.findall(r"```toml\n(.*?)```", text, flags=re.DOTALL)


def test_the_built_in_default_shown_is_the_one_the_gateway_runs() -> None:
    [block] = _toml_blocks(_section_text("## The built-in default"))

    assert tomllib.loads(block) == DEFAULT_CONFIG


def test_the_production_example_boots_with_both_surfaces_behind_tokens(tmp_path: Path) -> None:
    [block] = _toml_blocks(_section_text("## A production config"))
    config = load_config_dict(tomllib.loads(_placeholders(block)), source="production")

    with MetaRuntime.open(tmp_path / "state", config) as runtime:
        assert runtime.agent_memory is not None and runtime.scheduler is not None
    assert config.rpc.auth.tokens and config.console.auth.tokens
    assert not config.console.auth.anonymous_allowed and config.access.enabled


@pytest.mark.parametrize("block", _toml_blocks(DOC), ids=lambda b: b.splitlines()[0])
def test_every_config_on_the_page_loads(block: str) -> None:
    load_config_dict(tomllib.loads(_placeholders(block)))
