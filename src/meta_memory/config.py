"""Typed runtime configuration and every configuration refusal.

A config comes from a TOML file (``--config FILE``), from the Python builder, or from the
built-in default. Each path ends in :func:`load_config_dict`, which validates with pydantic
models that forbid unknown keys and turns every validation failure into one
:class:`~meta_memory.errors.ConfigError` whose message names the offending key and value.
Pydantic's own wording never reaches a caller.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator

from .errors import ConfigError, StorageRefused
from .memory.embedding.models import DEFAULT_MODEL, MODELS, current_model
from .memory.recall.ann import ANN_MIN_VECTORS
from .names import realm_problem

__all__ = [
    "DEFAULT_CONFIG",
    "AccessConfig",
    "AccessRule",
    "AgentMemoryConfig",
    "ConsoleConfig",
    "ConsoleToken",
    "ContentTrustConfig",
    "DistillerConfig",
    "HttpConfig",
    "LedgerConfig",
    "LoggingConfig",
    "MetaConfig",
    "MetricsConfig",
    "PostgresConfig",
    "RosterEntry",
    "RpcConfig",
    "RpcToken",
    "StewardConfig",
    "load_config_dict",
    "load_config_file",
    "normalize_origin",
]


# -- field validators with our own messages ------------------------------------------------


def _int_in(lo: int, hi: int) -> Callable[[Any], int]:
    def check(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"must be an integer between {lo} and {hi} (got {value!r})")
        if not lo <= value <= hi:
            raise ValueError(f"must be between {lo} and {hi} (got {value})")
        return value

    return check


def _choice(*allowed: str, case_insensitive: bool = False) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if isinstance(value, str):
            candidate = value.strip().lower() if case_insensitive else value
            if candidate in allowed:
                return candidate
        shown = " | ".join(f"'{a}'" for a in allowed)
        raise ValueError(f"must be one of {shown} (got {value!r})")

    return check


def _boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"must be true or false (got {value!r})")
    return value


def _nonempty_str(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"must be a non-empty string (got {value!r})")
    return value


def _optional_str(value: Any) -> str | None:
    if value is None:
        return None
    return _nonempty_str(value)


def _realm(value: Any) -> str:
    problem = realm_problem(value)
    if problem is not None:
        raise ValueError(f"{problem} (got {value!r})")
    assert isinstance(value, str)
    return value.strip()


def _str_list(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ValueError(f"must be an array of non-empty strings (got {value!r})")
    return tuple(v.strip() for v in value)


Bool = Annotated[bool, BeforeValidator(_boolean)]
Realm = Annotated[str, BeforeValidator(_realm)]
NonEmpty = Annotated[str, BeforeValidator(_nonempty_str)]


def _embedding_model(value: Any) -> str:
    """A model id of MODELS; a retired id is read as the model that replaced it."""
    if not isinstance(value, str) or current_model(value) not in MODELS:
        raise ValueError(f"must be one of {', '.join(sorted(MODELS))} (got {value!r})")
    return current_model(value)


OptionalStr = Annotated[str | None, BeforeValidator(_optional_str)]
StrList = Annotated[tuple[str, ...], BeforeValidator(_str_list)]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# -- sections ----------------------------------------------------------------------------------


class LedgerConfig(_Section):
    """``[memory]``: the assertion ledger, persisted as one local JSON file."""

    kind: Annotated[str, BeforeValidator(lambda v: _ledger_kind(v))] = "local_json"
    health_check_endpoint: OptionalStr = None


def _ledger_kind(value: Any) -> str:
    if value == "local_json":
        return "local_json"
    if isinstance(value, str) and value.strip().lower() == "elephant":
        raise ValueError(
            "'elephant' (the predecessor backend) was removed in Meta 0.9 with no alias; "
            'rewrite it as kind = "local_json", with the old endpoint as health_check_endpoint'
        )
    raise ValueError(f"must be 'local_json', the only ledger kind (got {value!r})")


class ContentTrustConfig(_Section):
    trusted_mcp_servers: StrList = ()
    untrusted_tools: StrList = ()
    trusted_tools: StrList = ()


class DistillerConfig(_Section):
    enabled: Bool = True
    runs_per_hour: Annotated[int, BeforeValidator(_int_in(1, 240))] = 12
    min_interactions: Annotated[int, BeforeValidator(_int_in(1, 100))] = 4
    model: OptionalStr = None


class StewardConfig(_Section):
    enabled: Bool = True
    cadence: NonEmpty = "*/6h"
    model: OptionalStr = None
    per_mob: Bool = False
    runs_per_day: Annotated[int, BeforeValidator(_int_in(1, 96))] = 4
    min_signals: Annotated[int, BeforeValidator(_int_in(1, 1000))] = 3


class HygienistConfig(_Section):
    enabled: Annotated[bool, BeforeValidator(lambda v: _parked_false(v))] = False


def _parked_false(value: Any) -> bool:
    if value is not False:
        raise ValueError("is parked in this release: only false is accepted")
    return False


def _parked_section(value: Any) -> Any:
    if value is True:
        raise ValueError("is parked in this release: only false or { enabled = false } is accepted")
    return HygienistConfig() if value is False else value


def _toggle_section(model: type[BaseModel]) -> Callable[[Any], Any]:
    """``true`` → defaults, ``false`` → disabled, a table → the table (on unless it says not)."""

    def coerce(value: Any) -> Any:
        if value is True:
            return model()
        if value is False:
            return model(enabled=False)
        return value

    return coerce


def _selector(value: Any) -> str:
    if value != "off":
        raise ValueError(f'is retired: only "off" is accepted (got {value!r})')
    return "off"


class PostgresConfig(_Section):
    """``[agent_memory.postgres]``: the database several gateways share (exactly one of ``dsn``
    and ``dsn_env``, the name of an environment variable holding the DSN)."""

    dsn: OptionalStr = None
    dsn_env: OptionalStr = None
    pool_min: Annotated[int, BeforeValidator(_int_in(1, 64))] = 1
    pool_max: Annotated[int, BeforeValidator(_int_in(1, 256))] = 10
    # Seconds a call waits for a pooled connection (and a new connection for the server) before it
    # is refused with StoreUnavailable; a gateway's boot waits as long for the first connection.
    timeout_s: Annotated[int, BeforeValidator(_int_in(1, 120))] = 10

    @model_validator(mode="after")
    def _one_dsn(self) -> PostgresConfig:
        if (self.dsn is None) == (self.dsn_env is None):
            raise ValueError('needs exactly one of dsn = "postgresql://..." and dsn_env = "NAME"')
        if self.pool_min > self.pool_max:
            raise ValueError(f"pool_min ({self.pool_min}) must not exceed pool_max ({self.pool_max})")
        return self


class AgentMemoryConfig(_Section):
    """``[agent_memory]``: identity-scoped memory in per-realm SQLite files."""

    enabled: Bool = True
    realm: Realm = "default"
    selection: Annotated[str, BeforeValidator(_choice("always", "contextual", case_insensitive=True))] = (
        "contextual"
    )
    max_entries: Annotated[int, BeforeValidator(_int_in(1, 64))] = 8
    recall_timeout_ms: Annotated[int, BeforeValidator(_int_in(1, 30_000))] = 500
    recall_failure_policy: Annotated[str, BeforeValidator(_choice("skip", "fail"))] = "skip"
    instruction_header: NonEmpty = "Agent memory"
    # Seed 000 injects on ordinary identity-first turns, so turns are budgeted by default;
    # "off" limits injection to the build-time block.
    per_turn_injection: Annotated[str, BeforeValidator(_choice("off", "budgeted"))] = "budgeted"
    defang_inbound: Bool = True
    store: Annotated[str, BeforeValidator(_choice("sqlite", "postgres", "markdown"))] = "sqlite"
    llm_writes: Annotated[str, BeforeValidator(_choice("observed", "quarantined"))] = "observed"
    recorder_tool: Bool = True
    # Our extension: a host session with no call for this long ends (its taint passes to the
    # identity's next session); sessions live in the realm store, so nothing else bounds them.
    session_idle_timeout_s: Annotated[int, BeforeValidator(_int_in(60, 30 * 24 * 3600))] = 24 * 3600
    content_trust: ContentTrustConfig = Field(default_factory=ContentTrustConfig)
    operator_scope: Annotated[str, BeforeValidator(_choice("off", "provisional"))] = "off"
    selector: Annotated[str, BeforeValidator(_selector)] = "off"
    # "hybrid" fuses the lexical ranking with nearest neighbours by embedding (the `semantic`
    # extra); the model is pinned by file hash, and switching it rebuilds the realm's vectors.
    recall: Annotated[str, BeforeValidator(_choice("lexical", "hybrid"))] = "lexical"
    embedding_model: Annotated[str, BeforeValidator(_embedding_model)] = DEFAULT_MODEL
    # What runs the model: numpy (the `semantic` extra), onnxruntime (`semantic-fast`: faster, more
    # memory), or auto: onnxruntime when it is installed.
    embedding_runtime: Annotated[str, BeforeValidator(_choice("auto", "numpy", "onnxruntime"))] = "auto"
    # A scope with at least this many vectors is searched through a graph index (HNSW), not exactly.
    ann_min_vectors: Annotated[int, BeforeValidator(_int_in(1_000, 1_000_000_000))] = ANN_MIN_VECTORS
    hygienist: Annotated[HygienistConfig, BeforeValidator(_parked_section)] = Field(
        default_factory=HygienistConfig
    )
    distiller: Annotated[DistillerConfig, BeforeValidator(_toggle_section(DistillerConfig))] = Field(
        default_factory=lambda: DistillerConfig(enabled=False)
    )
    steward: Annotated[StewardConfig, BeforeValidator(_toggle_section(StewardConfig))] = Field(
        default_factory=lambda: StewardConfig(enabled=False)
    )
    # Our extension: "process" survives a killed process (WAL, synchronous=NORMAL);
    # "power" also survives power loss (synchronous=FULL, an fsync per commit).
    durability: Annotated[str, BeforeValidator(_choice("process", "power"))] = "process"
    # Our extension: who builds the recall index. "process": a helper process beside the
    # runtime (index_worker.py; remember does not pay for indexing); "inline": the runtime's own
    # process, behind the writes; "auto": the gateway uses a helper, a library runtime indexes inline.
    index_worker: Annotated[str, BeforeValidator(_choice("auto", "process", "inline"))] = "auto"
    # Our extension: how many realms keep their files open at once (about eight file
    # descriptors each); the least recently used idle ones close first, and reopen on use.
    max_open_realms: Annotated[int, BeforeValidator(_int_in(1, 100_000))] = 64
    # Our extension: the database of store = "postgres".
    postgres: PostgresConfig | None = None

    @model_validator(mode="after")
    def _postgres_needs_its_section(self) -> AgentMemoryConfig:
        if self.store == "postgres" and self.postgres is None:
            raise ValueError(
                'store = "postgres" needs [agent_memory.postgres] with dsn = "postgresql://..." or dsn_env = "NAME"'
            )
        if self.store != "postgres" and self.postgres is not None:
            raise ValueError(
                f'[agent_memory.postgres] is set but store is {self.store!r}: set store = "postgres"'
            )
        return self

    @model_validator(mode="after")
    def _sqlite_only_knobs(self) -> AgentMemoryConfig:
        if self.store != "markdown":
            return self
        sqlite_only = [
            key
            for key, is_set in (
                ("llm_writes", "llm_writes" in self.model_fields_set),
                ("content_trust", "content_trust" in self.model_fields_set),
                ("distiller", self.distiller.enabled),
                ("steward", self.steward.enabled),
                ("operator_scope", self.operator_scope != "off"),
                (
                    "per_turn_injection",
                    "per_turn_injection" in self.model_fields_set and self.per_turn_injection == "budgeted",
                ),
            )
            if is_set
        ]
        if sqlite_only:
            raise ValueError(f"{'/'.join(sqlite_only)} require store = 'sqlite'")
        return self


def _labels(value: Any) -> dict[str, str]:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and k.strip() and isinstance(v, str) for k, v in value.items()
    ):
        raise ValueError(f"must be a table of string labels (got {value!r})")
    return dict(value)


def _sha256_hex(value: Any) -> str:
    if not isinstance(value, str) or len(value) != 64 or any(c not in "0123456789abcdef" for c in value):
        raise ValueError(
            "must be the lowercase hex SHA-256 of the token (64 characters); "
            "make one with `meta_gateway hash-token`"
        )
    return value


Labels = Annotated[dict[str, str], BeforeValidator(_labels)]


class RosterEntry(_Section):
    """``[[roster]]``: an identity the app declares, with its mob, role and labels."""

    identity: NonEmpty
    mob: OptionalStr = None
    role: OptionalStr = None
    labels: Labels = Field(default_factory=dict)


class ConsoleToken(_Section):
    """A console bearer token, stored only as its SHA-256, and the principal it authenticates."""

    token_sha256: Annotated[str, BeforeValidator(_sha256_hex)]
    subject: NonEmpty
    groups: StrList = ()


class ConsoleAuthConfig(_Section):
    """``[console.auth]``: once a token is configured, a console call without a valid one is 401
    unless ``allow_anonymous = true``; with no token, the console is anonymous unless
    ``allow_anonymous = false`` (then every call is 401). Beside ``[[rpc.auth.tokens]]``, a console
    with no token must set ``allow_anonymous`` either way, or no HTTP app is built over the config
    (``gateway.http.check_console_exposure``)."""

    tokens: tuple[ConsoleToken, ...] = ()
    allow_anonymous: Annotated[bool | None, BeforeValidator(lambda v: None if v is None else _boolean(v))] = (
        None
    )

    @property
    def anonymous_allowed(self) -> bool:
        return self.allow_anonymous if self.allow_anonymous is not None else not self.tokens


class ConsoleConfig(_Section):
    """``[console]``: the console surface (``POST /console/rpc``)."""

    read_only: Bool = False
    auth: ConsoleAuthConfig = Field(default_factory=ConsoleAuthConfig)


def _token_realms(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list | tuple) or not value:
        raise ValueError(f"must be a non-empty array of realm names (omit it for every realm; got {value!r})")
    realms = []
    for realm in value:
        problem = realm_problem(realm)
        if problem is not None:
            raise ValueError(f"entries {problem} (got {realm!r})")
        realms.append(realm.strip())
    return tuple(dict.fromkeys(realms))


class RpcToken(_Section):
    """An application-surface bearer token (``POST /rpc``), stored only as its SHA-256, with the
    subject it authenticates and, optionally, the only realms it may use."""

    token_sha256: Annotated[str, BeforeValidator(_sha256_hex)]
    subject: NonEmpty
    realms: Annotated[tuple[str, ...] | None, BeforeValidator(_token_realms)] = None


class RpcAuthConfig(_Section):
    tokens: tuple[RpcToken, ...] = ()


class RpcConfig(_Section):
    """``[rpc]``: the application surface (``POST /rpc``); once ``[[rpc.auth.tokens]]`` holds a
    token, a call without a valid one is 401."""

    auth: RpcAuthConfig = Field(default_factory=RpcAuthConfig)


def _origins(value: Any) -> tuple[str, ...]:
    origins = []
    for origin in _str_list(value):
        parsed = urlsplit(origin)
        if (
            parsed.scheme not in ("http", "https")
            or not parsed.hostname
            or parsed.path not in ("", "/")
            or parsed.query
            or parsed.fragment
            or parsed.username is not None
        ):
            raise ValueError(f"entries must be origins like 'https://memory.example.com' (got {origin!r})")
        try:
            port = parsed.port
        except ValueError:
            raise ValueError(f"entries must be origins with a valid port (got {origin!r})") from None
        origins.append(normalize_origin(parsed.scheme, parsed.hostname, port))
    return tuple(origins)


def normalize_origin(scheme: str, host: str, port: int | None) -> str:
    """``scheme://host[:port]`` as a browser sends it in ``Origin``: lowercase, IPv6 in brackets,
    no default port."""
    scheme, host = scheme.lower(), host.lower()
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    default = {"http": 80, "https": 443}.get(scheme)
    return f"{scheme}://{host}" + (f":{port}" if port is not None and port != default else "")


def _hosts(value: Any) -> tuple[str, ...]:
    hosts = []
    for host in _str_list(value):
        candidate = host.lower()
        if "/" in candidate or "@" in candidate or any(c.isspace() for c in candidate):
            raise ValueError(f"entries must be host names like 'memory.example.com' (got {host!r})")
        hosts.append(candidate)
    return tuple(hosts)


class HttpConfig(_Section):
    """``[http]``: what ``meta_gateway serve`` accepts beyond its own loopback names and origins."""

    allowed_origins: Annotated[tuple[str, ...], BeforeValidator(_origins)] = ()
    allowed_hosts: Annotated[tuple[str, ...], BeforeValidator(_hosts)] = ()
    request_timeout_s: Annotated[int, BeforeValidator(_int_in(1, 3600))] = 30


def _optional_sha256_hex(value: Any) -> str | None:
    return None if value is None else _sha256_hex(value)


class MetricsConfig(_Section):
    """``[metrics]``: ``GET /metrics`` of ``meta_gateway serve``. ``token_sha256``: a scrape token
    of its own (console tokens open it too); without one, it is as anonymous as the console."""

    token_sha256: Annotated[str | None, BeforeValidator(_optional_sha256_hex)] = None


class LoggingConfig(_Section):
    """``[logging]``: ``format = "json"`` writes one JSON object per log line (``--log-format``
    overrides it)."""

    format: Annotated[str, BeforeValidator(_choice("text", "json"))] = "text"


class AccessRule(_Section):
    id: NonEmpty
    effect: Annotated[str, BeforeValidator(_choice("allow", "deny"))] = "allow"
    subjects: StrList = ()
    groups: StrList = ()
    actions: StrList
    agents: StrList = ()
    roles: StrList = ()
    match_labels: Labels = Field(default_factory=dict)

    @model_validator(mode="after")
    def _known_actions(self) -> AccessRule:
        # Imported here: the access package imports this module.
        from .access.actions import UnknownAction, validate_patterns

        try:
            validate_patterns(self.actions)
        except UnknownAction as exc:
            raise ValueError(str(exc)) from None
        return self


class AccessConfig(_Section):
    """``[access]``: off by default (everything allowed); when enabled, at least one admin."""

    enabled: Bool = False
    admins: StrList = ()
    rules: tuple[AccessRule, ...] = ()

    @model_validator(mode="after")
    def _enabled_needs_an_admin(self) -> AccessConfig:
        if self.enabled and not self.admins:
            raise ValueError('enabled = true requires at least one admin (admins = ["<subject>"])')
        ids = [r.id for r in self.rules]
        duplicate = sorted({i for i in ids if ids.count(i) > 1})
        if duplicate:
            raise ValueError(f"rule ids must be unique (repeated: {', '.join(duplicate)})")
        return self


class MetaConfig(_Section):
    """The whole configuration. ``memory=None`` keeps the ledger in memory only."""

    memory: LedgerConfig | None = None
    agent_memory: Annotated[AgentMemoryConfig, BeforeValidator(_toggle_section(AgentMemoryConfig))] = Field(
        default_factory=lambda: AgentMemoryConfig(enabled=False)
    )
    roster: tuple[RosterEntry, ...] = ()
    console: ConsoleConfig = Field(default_factory=ConsoleConfig)
    rpc: RpcConfig = Field(default_factory=RpcConfig)
    http: HttpConfig = Field(default_factory=HttpConfig)
    access: AccessConfig = Field(default_factory=AccessConfig)
    metrics: MetricsConfig = Field(default_factory=MetricsConfig)
    logging: LoggingConfig = Field(default_factory=LoggingConfig)

    def refuse_unservable(self) -> None:
        """Refusals that are about storage rather than syntax (-32014 on the wire)."""
        if self.agent_memory.enabled and self.agent_memory.store == "markdown":
            raise StorageRefused(
                "agent_memory.store = 'markdown' is refused: markdown is import-only in this release; "
                "use store = 'sqlite' (existing markdown files are imported on first access)"
            )


DEFAULT_CONFIG: dict[str, Any] = {"memory": {"kind": "local_json"}, "agent_memory": {"enabled": True}}


# -- loading ------------------------------------------------------------------------------


def load_config_file(path: str | Path) -> MetaConfig:
    """Read and validate a TOML config file, taken exactly as written."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read config file {p}: {exc.strerror or exc}") from exc
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"config file {p} is not valid TOML: {exc}") from exc
    return load_config_dict(data, source=str(p))


def load_config_dict(data: Mapping[str, Any], *, source: str = "config") -> MetaConfig:
    """Validate a config mapping; every failure is one :class:`ConfigError` naming keys."""
    try:
        config = MetaConfig.model_validate(dict(data))
    except ValidationError as exc:
        raise ConfigError(f"{source}: {_describe(exc, data)}") from None
    config.refuse_unservable()
    return config


def _rule_id(data: Mapping[str, Any], index: str) -> str | None:
    """The ``id`` written on ``access.rules[index]``, when it has a usable one."""
    access = data.get("access")
    rules = access.get("rules") if isinstance(access, Mapping) else None
    if not isinstance(rules, list) or not index.isdigit() or int(index) >= len(rules):
        return None
    rule = rules[int(index)]
    rule_id = rule.get("id") if isinstance(rule, Mapping) else None
    return rule_id if isinstance(rule_id, str) and rule_id.strip() else None


def _key(loc: list[str], data: Mapping[str, Any]) -> str:
    # A rule is named by its id, which the operator wrote, rather than by its position.
    if loc[:2] == ["access", "rules"] and len(loc) > 2 and (rule_id := _rule_id(data, loc[2])) is not None:
        return " ".join([f"access rule {rule_id!r}", *([".".join(loc[3:])] if loc[3:] else [])])
    return ".".join(loc) or "config"


def _describe(exc: ValidationError, data: Mapping[str, Any]) -> str:
    unknown: dict[str, list[str]] = {}
    problems: list[str] = []
    for err in exc.errors(include_url=False):
        loc = [str(part) for part in err["loc"] if not str(part).startswith("function-")]
        if err["type"] == "extra_forbidden":
            section = _key(loc[:-1], data) if loc[:-1] else "top level"
            unknown.setdefault(section, []).append(loc[-1])
            continue
        key = _key(loc, data)
        if err["type"] == "value_error":
            reason = str(err["ctx"]["error"]) if "ctx" in err else err["msg"]
        elif err["type"] in ("model_type", "model_attributes_type", "dict_type"):
            reason = f"must be a table (got {err['input']!r})"
        else:
            reason = err["msg"].lower()
        # Field messages read on from the key ("x must be ..."); section-level rules stand alone.
        joiner = " " if reason.startswith(("must ", "is ", "'")) else ": "
        problems.append(f"{key}{joiner}{reason}")
    parts = [
        f"unsupported {section if section != 'top level' else 'top-level'} "
        f"{'fields' if section != 'top level' else 'sections'}: {', '.join(sorted(keys))}"
        for section, keys in unknown.items()
    ]
    return "; ".join(parts + problems)
