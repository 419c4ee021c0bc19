"""The secret rules: for each class, compiled patterns and, where a pattern alone would refuse
ordinary text, a check of what it matched.

Every rule reads a text already normalized by :func:`~meta_memory.memory.secrets.normalize_for_scan`
(NFKC, invisible characters removed). Patterns are ASCII-only (``re.ASCII``): after NFKC a key
name or a provider prefix is ASCII, and an ASCII class cannot be satisfied by a look-alike digit
or letter from another script.

Cost shapes the patterns, since every write runs all of them over every field. Each pattern
starts with a literal, which the regex engine finds with a fast scan (a leading look-behind, a
group or a set of first letters makes it try every position instead), so the character before a
match is checked by hand; no pattern scans far from where it starts unless it then matches, so
a text made of one prefix repeated costs linear time; the case-insensitive rules run over an
ASCII-lowercased copy of the text made once per text; and a rule is skipped when the text lacks
all of its gates (characters or short strings every match holds), a text that lacks every rule's
gates without a rule being asked. Values are judged, never returned: nothing here can echo a
secret.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["RULES", "TAG_RULES", "Rule", "ScanText", "first_class", "first_tag_class", "secret_value"]

_A = re.ASCII
_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_TOKEN_CHARS = _ALNUM | {"_", "-"}
_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


class ScanText:
    """A normalized text and, made on first use, its ASCII-lowercased copy: the same length, so a
    position in one is the same position in the other."""

    __slots__ = ("_folded", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self._folded: str | None = None

    @property
    def folded(self) -> str:
        if self._folded is None:
            folded = self.text.lower()
            if len(folded) != len(self.text):  # a non-ASCII letter lowercases to two characters
                folded = self.text.translate(_ASCII_LOWER)
            self._folded = folded
        return self._folded


Accept = Callable[[ScanText, "re.Match[str]"], bool]


@dataclass(frozen=True)
class Rule:
    """One way to find a secret of ``secret_class``: one of ``patterns`` matches (over the
    lowercased text when ``folded``) and ``accept``, when given, agrees with the match. ``gates``:
    strings of which every match holds one, looked for first (in the text the patterns read),
    because a character is found far faster than any pattern."""

    secret_class: str
    patterns: tuple[re.Pattern[str], ...]
    accept: Accept | None = None
    gates: tuple[str, ...] = ()
    folded: bool = False
    once: bool = False  # ``accept`` judges the whole text: it is asked of the first match only

    def matches(self, text: str) -> bool:
        """Whether this rule alone finds a secret in ``text`` (normalized)."""
        return _first(text, (_row(self),)) is not None


# -- placeholders: what documentation and templates write where a secret would go ----------------

# Masked or cut short (``sk_live_xxxx``, ``ghp_****``, ``sk-proj-...``), or a template.
_MASKED = re.compile(r"xxxx|\*\*\*|\.\.\.|<|>|\{\{|\$\{", re.IGNORECASE)
_PLACEHOLDER_WORDS = re.compile(r"your|example|placeholder|changeme|redacted|dummy|sample", re.IGNORECASE)
_PLACEHOLDER_EXACT = frozenset(
    {
        "password", "passwd", "pass", "pwd", "pw", "secret", "token", "apikey", "key", "value",
        "string", "str", "none", "null", "nil", "undefined", "true", "false", "empty", "required",
        "optional", "test", "foo", "bar", "baz", "qux", "hidden", "masked", "default", "admin",
        "root", "guest", "user", "username", "anonymous", "mysecret", "mypassword", "mytoken",
        "secretkey", "accesstoken", "authtoken",
    }
)  # fmt: skip
_MASK_ONLY = re.compile(r"[*xX.#?_\-\u2022\u00b7]+")
# ${VAR}, $(cmd), $VAR, $dir/file, %s, %(name)s, %VAR%: a template or an environment variable.
_TEMPLATE = re.compile(
    r"\$\{.*|\$\(.*|\$[A-Z_][A-Z0-9_]*|\$[a-z_][a-z_]*|\$[A-Za-z_][A-Za-z0-9_]*/.*"
    r"|%\(?[A-Za-z_]*\)?[sd]|%[A-Za-z_][A-Za-z0-9_]*%"
)
# Starts a value that is a reference or a structure rather than a literal: a template, a list, an
# object, a parenthesized note.
_REFERENCE_START = frozenset("{<[(")


def _is_placeholder(value: str) -> bool:
    if value[0] in _REFERENCE_START or _TEMPLATE.fullmatch(value) or _MASK_ONLY.fullmatch(value):
        return True
    if value[0] in "*!&" and value[1:].isalpha():  # a YAML alias, tag or anchor: *db, !vault, &pw
        return True
    if _MASKED.search(value) or _PLACEHOLDER_WORDS.search(value):
        return True
    letters = "".join(c for c in value.lower() if c.isalnum())
    return letters in _PLACEHOLDER_EXACT or letters.endswith("here")


# -- values: does the text after `password =` look like a secret? ----------------------------------

_DOTTED_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_CALL_OR_INDEX = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*[(\[].*")
# An environment variable's or a constant's name: capitals, with underscores between words.
_CONSTANT = re.compile(r"[A-Z_]+|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_NUMBERISH = re.compile(r"[vV]?[0-9][0-9.,:/_-]*[A-Za-z]{0,3}")
# Join the parts of a name, a path or a record ("pw_uid:pw_gid", "projects/x/locations"): not what
# makes a value a secret.
_SEPARATORS = frozenset("_-./:")
_CAMEL_WORDS = re.compile(r"[A-Z]?[a-z]+(?:[A-Z][a-z]+)*")
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_PATH_START = re.compile(r"(?:~|\.{1,2})?/")
_STRUCTURE_SEPARATORS = re.compile(r"[/:]")
# "ENV=name:latest": a value that is itself an assignment.
_NESTED_ASSIGNMENT = re.compile(r"(?:[A-Z_][A-Z0-9_]*|[a-z_][a-z0-9_]*)=[^=]")
# "OAUTH2CLIENTSECRET", "MYTOKEN": a variable's name, capitals and digits, naming what it holds.
_NAMED_CONSTANT = re.compile(r"[A-Z0-9]*(?:PASS|PWD|SECRET|TOKEN|KEY)[A-Z0-9]*")


def _is_structured(value: str) -> bool:
    """A path, a resource name or a record rather than one secret: it starts like a path
    (``/run/secrets/db``, ``~/.pgpass``) or has two or more ``/`` or ``:`` separators
    (``projects/p/secrets/s/versions/2``, ``fe80::1``, ``pw_uid:pw_gid``), and none of its parts
    mixes capitals, small letters and digits or holds ``+``, as a base64 secret's parts do."""
    if not _PATH_START.match(value) and value.count("/") + value.count(":") < 2:
        return False
    if "+" in value or value.endswith("="):
        return False
    return not any(
        any(c.isupper() for c in part) and any(c.islower() for c in part) and any(c.isdigit() for c in part)
        for part in _STRUCTURE_SEPARATORS.split(value)
    )


def secret_value(value: str, *, password: bool = False, min_length: int = 8) -> bool:
    """Whether ``value``, assigned to a credential name, looks like a secret rather than prose,
    code, a reference or a placeholder.

    A secret is at least ``min_length`` characters without whitespace or ``|``; is not a
    placeholder (``<your token>``, ``${TOKEN}``, ``********``, ``YOUR_API_KEY``, ``...``), a
    reference (``os.environ[...]``, ``settings.TOKEN``, a path, a URL) or a number, version or
    date; and holds a letter with a digit or a symbol, or is a run of 16 or more letters of both
    cases that is not CamelCase words. ``password``: the name is a password's, so a run of
    digits is one too.
    """
    if len(value) < min_length or "|" in value or any(c.isspace() for c in value):
        return False
    if _is_placeholder(value):
        return False
    if _DOTTED_NAME.fullmatch(value) or _CALL_OR_INDEX.fullmatch(value) or _CONSTANT.fullmatch(value):
        return False
    if _URL.match(value) or _is_structured(value) or _NESTED_ASSIGNMENT.match(value):
        return False
    if _NAMED_CONSTANT.fullmatch(value):
        return False
    if value.isdigit():
        return password
    if _NUMBERISH.fullmatch(value) or not any(c.isalpha() for c in value):
        return False
    if any(c.isdigit() or (not c.isalnum() and c not in _SEPARATORS) for c in value):
        return True
    letters = value.replace("_", "").replace("-", "")
    return (
        len(letters) >= 16
        and letters.isalpha()
        and any(c.isupper() for c in letters)
        and any(c.islower() for c in letters)
        and _CAMEL_WORDS.fullmatch(letters) is None
    )


# -- provider tokens ----------------------------------------------------------------------------


def _token(not_after: frozenset[str] = _ALNUM, *, lead: str = "", unmasked: bool = True) -> Accept:
    """A provider token's check: not right after a character of ``not_after`` (a token glued to a
    longer word is that word) and, with ``unmasked``, not masked. ``lead``: the token starts one
    character before the match, with one of these (the pattern then starts with a literal)."""
    back = 1 if lead else 0

    def accept(t: ScanText, m: re.Match[str]) -> bool:
        text = t.text
        start = m.start() - back
        if start < 0 or (lead and text[start] not in lead):
            return False
        if start and text[start - 1] in not_after:
            return False
        return not (unmasked and _MASKED.search(m.group()))

    return accept


def _rx(pattern: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(pattern, _A | flags)


_AWS_ACCESS_KEY_ID = r"A(?:KIA|SIA|BIA|CCA)[A-Z0-9]{16}(?![A-Za-z0-9])"
_GOOGLE_KEY = r"AIza[0-9A-Za-z_-]{35}"

# PEM ("-----BEGIN RSA PRIVATE KEY-----", OpenSSH, PKCS#8, encrypted) and PGP ("-----BEGIN PGP
# PRIVATE KEY BLOCK-----"): the header's two markers anywhere in the text; PuTTY key files likewise.
_PEM_PRIVATE = _rx(r"PRIVATE KEY(?: BLOCK)?-----")
_PUTTY_PRIVATE = _rx(r"Private-Lines:")


def _pem_private(t: ScanText, m: re.Match[str]) -> bool:
    return _PEM_PRIVATE.search(t.text) is not None


def _putty_private(t: ScanText, m: re.Match[str]) -> bool:
    return _PUTTY_PRIVATE.search(t.text) is not None


# -- JWTs ---------------------------------------------------------------------------------------

# A real header is well under a kilobyte (a few with certificate chains reach several).
_JWT_HEADER_MAX = 16_384


def _jwt(t: ScanText, m: re.Match[str]) -> bool:
    """Three base64url parts (a JWS; a JWE's first three), the first a JSON object, the signature
    at least 16 characters: an unsigned token (``alg: none``) grants nothing and is not refused."""
    start = m.start()
    if start and t.text[start - 1] in _TOKEN_CHARS:
        return False
    header = m.group(1)
    if len(header) > _JWT_HEADER_MAX:
        return False
    try:
        decoded = base64.urlsafe_b64decode(header + "=" * (-len(header) % 4))
        return isinstance(json.loads(decoded), dict)
    except (binascii.Error, ValueError, RecursionError):  # RecursionError: "[[[[..." nested too deep
        return False


# -- passwords in URLs and DSNs -----------------------------------------------------------------


# "host:8080?next=a@b": a port and a query, not a password ("#" and "?" are kept in a password:
# people write DSNs by hand, unencoded).
_PORT = _rx(r"[0-9]{1,5}(?:[?#].*)?")


def _url_credentials(t: ScanText, m: re.Match[str]) -> bool:
    """``scheme://user:password@host`` (``redis://:password@host`` too) with a password that is
    not a placeholder, not the user name again (``postgres:postgres``) and not a port."""
    if m.start() == 0 or t.text[m.start() - 1] not in _ALNUM:
        return False  # no scheme
    user, password = m.group(1), m.group(2)
    if password == user or _PORT.fullmatch(password):
        return False
    return not _is_placeholder(password)


# -- Authorization headers and bearer tokens -----------------------------------------------------


def _credential(min_length: int) -> Accept:
    def accept(t: ScanText, m: re.Match[str]) -> bool:
        credential = t.text[m.start("credential") : m.end("credential")]
        basic = m.group("scheme") == "basic" if "scheme" in m.re.groupindex else False
        return secret_value(credential, min_length=8 if basic else min_length)

    return accept


# -- credential assignments ------------------------------------------------------------------------

# A name ends in one of these stems (``DB_PASSWORD``, ``GITHUB_TOKEN``, ``clientSecret``,
# ``OPENAI_API_KEY``), perhaps numbered (``TOKEN_2``); "key" only after one of _KEY_QUALIFIER
# ("api", "access", ...), and "pass"/"pw"/"pwd" only where a name part starts ("pass" is not
# "bypass"), both checked by hand. One pattern a stem, so that each starts with a literal.
_STEMS = ("pass(?:word|wd|phrase)?", "pwd?", "secret", "token", "key")
_CLOSE = r"(?:[_.-]?[0-9]{1,2})?(?:\\?[\"'`\]]){0,2}"
_SEPARATOR = (
    r"(?P<sep>"
    r"[ \t]*:[ \t]*[a-z_][a-z0-9_.\[\]|, ]{0,40}?[ \t]*=(?!=)[ \t]*"  # password: str = "..."
    r"|[ \t]*(?::=|=>|==|=|:(?![:/]))[ \t]*"  # env, shell, YAML, TOML, JSON, Go, PHP (not C++ "::")
    r"|[ \t]+(?:is|was)[ \t]+"  # chat: "my password is ..."
    r"|>"  # XML: <password>...</password>
    r")"
)
_VALUE = (
    r"(?:\"(?P<dq>[^\"\n]{1,256})\"|'(?P<sq>[^'\n]{1,256})'|`(?P<bq>[^`\n]{1,256})`"
    r"|\\\"(?P<eq>[^\"\\\n]{1,256})\\\"|[\"'`]?(?P<bare>[^\s\"'`,;&<>|\\]{1,256}))"
)
_VALUE_GROUPS = ("dq", "sq", "bq", "eq", "bare")
_STEM_AT = _rx("|".join(_STEMS))
_STEM_ENDS = _rx("(?:" + "|".join(_STEMS) + r")(?:[_.-]?[0-9]{1,2})?\Z")
_KEY_QUALIFIER = _rx(
    r"(?:api|access|secret|private|account|encryption|signing|master|client|auth|app|shared[ ._-]?access)"
    r"[ ._-]?\Z"
)
_NAME_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789_.-"
_SHORT_STEMS = frozenset({"pass", "pwd", "pw"})
_PASSWORD_STEMS = frozenset({"password", "passwd", "passphrase", "pwd"})
_TRAILING = ".,:!?)]}"
# An AWS secret access key (40 base64 characters) may start with "/", like a path.
_AWS_SECRET_VALUE = _rx(r"[A-Za-z0-9/+=]{40}")


def _assigns_secret(t: ScanText, m: re.Match[str], start: int) -> bool:
    """Whether ``m``, an assignment whose name's stem starts at ``start``, assigns a secret."""
    text, folded = t.text, t.folded
    stem_match = _STEM_AT.match(folded, start)
    if stem_match is None:
        return False
    stem = stem_match.group()
    key = stem
    if stem == "key":
        qualifier = _KEY_QUALIFIER.search(folded, max(0, start - 24), start)
        if qualifier is None:
            return False
        key = folded[qualifier.start() : start] + stem
    elif stem in _SHORT_STEMS:
        before = text[start - 1] if start else ""
        if before.isalpha() and not (before.islower() and text[start].isupper()):
            return False  # "dbPass" starts a name part; "bypass" does not
    sep = m.group("sep")
    group = next(g for g in _VALUE_GROUPS if m.group(g) is not None)
    if sep == ">" and not (
        folded[max(0, start - 64) : start].rstrip(_NAME_CHARS).endswith("<")
        and folded.startswith("</", m.end(group))
    ):
        return False  # ">" separates a value only in <password>...</password>
    value = text[m.start(group) : m.end(group)]
    if group == "bare":
        value = value.rstrip(_TRAILING)
        if sep.strip() == "=>":
            return False  # PHP, Perl and Ruby quote the value; "{a => b}" is a rename in a diffstat
        if not sep.strip() and value.startswith("-"):
            return False  # "--ask-password --user=x": the next flag, not a value
    if not value:
        return False
    aws_secret = "".join(c for c in key if c.isalpha()).endswith("accesskey")
    if aws_secret and _AWS_SECRET_VALUE.fullmatch(value) and not _is_placeholder(value):
        return True
    password = stem in _PASSWORD_STEMS
    # Prose ("the password is ...") asks for a longer value than a name = value spelling does.
    short_ok = (password or stem == "pass") and sep.strip() not in ("is", "was")
    return secret_value(value, password=password, min_length=6 if short_ok else 8)


def _assignment(t: ScanText, m: re.Match[str]) -> bool:
    return _assigns_secret(t, m, m.start())


def _flag(t: ScanText, m: re.Match[str]) -> bool:
    stem = _STEM_ENDS.search(m.group("name"))
    return stem is not None and _assigns_secret(t, m, m.start("name") + stem.start())


_PLAIN_TOKEN = _token()
_WORD_TOKEN = _token(_TOKEN_CHARS)

RULES: tuple[Rule, ...] = (
    Rule("private-key", (_rx(r"-----BEGIN"),), _pem_private, ("-",), once=True),
    Rule(
        "private-key",
        (_rx(r"PuTTY-User-Key-File-"),),
        _putty_private,
        ("-",),
        once=True,
    ),
    Rule("aws-access-key-id", (_rx(_AWS_ACCESS_KEY_ID),), _PLAIN_TOKEN, ("A",)),
    # A GitHub token glued to other text is still a token (REFERENCE 4.5: no leading boundary).
    Rule(
        "github-token",
        (_rx(r"gh[pousr]_[A-Za-z0-9]{36,}"), _rx(r"github_pat_[A-Za-z0-9_]{22,}")),
        _token(frozenset()),
        ("_",),
    ),
    Rule(
        "gitlab-token",
        (_rx(r"gl(?:pat|dt|rt|ptt|cbt|soat|oas|ft|imt|agent)-[A-Za-z0-9_.-]{20,}"),),
        _PLAIN_TOKEN,
        ("-",),
    ),
    Rule("anthropic-api-key", (_rx(r"sk-ant-[A-Za-z0-9_-]{20,}"),), _WORD_TOKEN, ("-",)),
    # Project, service-account and admin keys, and the older "sk-" + 48 (always with a digit).
    Rule(
        "openai-api-key",
        (
            _rx(
                r"sk-(?:(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}|(?=[A-Za-z0-9]{0,255}[0-9])[A-Za-z0-9]{20,})"
            ),
        ),
        _WORD_TOKEN,
        ("-",),
    ),
    Rule("google-api-key", (_rx(_GOOGLE_KEY),), _WORD_TOKEN, ("A",)),
    Rule(
        "stripe-key",
        (_rx(r"k_(?:live|test)_[A-Za-z0-9]{16,}"),),
        _token(lead="sr"),
        ("_",),
    ),
    Rule("stripe-key", (_rx(r"whsec_[A-Za-z0-9]{24,}"),), _PLAIN_TOKEN, ("_",)),
    Rule(
        "slack-token",
        (
            _rx(r"xox[abposre]-(?=[A-Za-z0-9-]{0,255}[0-9])[A-Za-z0-9-]{10,}"),
            _rx(r"xapp-[0-9]-[A-Za-z0-9-]{20,}"),
            _rx(r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]{20,}"),
        ),
        _PLAIN_TOKEN,
        ("-", "/"),
    ),
    Rule("npm-token", (_rx(r"npm_[A-Za-z0-9]{36}"),), _PLAIN_TOKEN, ("_",)),
    Rule("pypi-token", (_rx(r"pypi-AgE[A-Za-z0-9_-]{50,}"),), _PLAIN_TOKEN, ("-",)),
    Rule("huggingface-token", (_rx(r"hf_[A-Za-z]{34}(?![A-Za-z0-9])"),), _PLAIN_TOKEN, ("_",)),
    Rule("sendgrid-key", (_rx(r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}"),), _PLAIN_TOKEN, (".",)),
    # The look-behind after the literal: "eyJ" inside a longer run is not where a token starts.
    Rule(
        "jwt",
        (_rx(r"(eyJ(?<![A-Za-z0-9_-]eyJ)[A-Za-z0-9_-]{10,}+)\.[A-Za-z0-9_-]*+\.[A-Za-z0-9_-]{16}"),),
        _jwt,
        (".",),
    ),
    Rule(
        "url-credentials",
        (_rx(r"://([^\s/?#@:]*):([^\s/@]+)@[A-Za-z0-9\[_%-]"),),
        _url_credentials,
        ("@",),
    ),
    Rule(
        "authorization-header",
        (
            _rx(
                r"authorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:(?P<scheme>bearer|basic|token|apikey)[ \t]+)?"
                r"(?P<credential>[a-z0-9._~+/=-]{8,})"
            ),
            _rx(r"bearer[ \t]+(?P<credential>[a-z0-9._~+/=-]{16,})"),
        ),
        _credential(16),
        ("authorization", "bearer"),
        folded=True,
    ),
    Rule(
        "credential-assignment",
        tuple(_rx(stem + _CLOSE + _SEPARATOR + _VALUE) for stem in _STEMS),
        _assignment,
        ("=", ":", ">", " is", " was", "\tis", "\twas"),
        folded=True,
    ),
    # A command-line flag (--password VALUE, --db-password=VALUE): its name is checked by hand.
    Rule(
        "credential-assignment",
        (_rx(r"--(?P<name>[a-z][a-z0-9_.-]{0,63})(?P<sep>[ \t]+|=)" + _VALUE),),
        _flag,
        ("--",),
        folded=True,
    ),
)

# A stored tag is lowercased: the classes whose prefix has capitals, again without case.
TAG_RULES: tuple[Rule, ...] = (
    Rule("aws-access-key-id", (_rx(_AWS_ACCESS_KEY_ID, re.IGNORECASE),), _PLAIN_TOKEN),
    Rule("google-api-key", (_rx(_GOOGLE_KEY, re.IGNORECASE),), _WORD_TOKEN),
)

_Row = tuple[
    str, tuple[str, ...], tuple[Callable[..., "re.Match[str] | None"], ...], bool, Accept | None, bool
]


def _row(rule: Rule) -> _Row:
    searches = tuple(p.search for p in rule.patterns)
    return (rule.secret_class, rule.gates, searches, rule.folded, rule.accept, rule.once)


def _first(text: str, rows: tuple[_Row, ...], scan: ScanText | None = None) -> str | None:
    # One loop over plain tuples rather than a method a rule: on a short text the calls, not the
    # patterns, are most of the cost.
    scan = scan or ScanText(text)
    for secret_class, gates, searches, folded, accept, once in rows:
        subject = scan.folded if folded else text
        if gates:
            for gate in gates:
                if gate in subject:
                    break
            else:
                continue
        for search in searches:
            m = search(subject)
            while m is not None:
                if accept is None or accept(scan, m):
                    return secret_class
                m = None if once else search(subject, m.end())
    return None


_RULE_ROWS = tuple(_row(rule) for rule in RULES)
_TAG_ROWS = tuple(_row(rule) for rule in TAG_RULES)


def _any_of(gates: set[str]) -> re.Pattern[str]:
    return re.compile("|".join(re.escape(g) for g in sorted(gates, key=len, reverse=True)))


# Every rule's gates in one pattern each: a text that holds none (most titles and tags) is clean
# without a rule being asked. Built from the rules' own gates, so it cannot drift from them.
assert all(rule.gates for rule in RULES), "an ungated rule would let every text through"
_TEXT_GATES = _any_of({g for rule in RULES if not rule.folded for g in rule.gates})
_FOLDED_GATES = _any_of({g for rule in RULES if rule.folded for g in rule.gates})


def first_class(text: str) -> str | None:
    """The class of the first rule of :data:`RULES` that finds a secret in ``text`` (normalized)."""
    scan = ScanText(text)
    if _TEXT_GATES.search(text) is None and _FOLDED_GATES.search(scan.folded) is None:
        return None
    return _first(text, _RULE_ROWS, scan)


def first_tag_class(text: str) -> str | None:
    """:func:`first_class` of :data:`TAG_RULES`: the classes whose prefix has capitals, without case."""
    return _first(text, _TAG_ROWS)
