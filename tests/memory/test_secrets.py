# Fake secrets are assembled from fragments so no provider-shaped literal sits contiguous in the source
# (keeps repository secret scanners quiet); the assembled strings are what the patterns see.
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from meta_memory.memory import secrets
from meta_memory.memory.secrets import (
    SECRET_CLASSES,
    SecretMatch,
    find_secret_in_fields,
    scan_secrets,
)

AWS_KEY = "AK" + "IA" + "IOSFODNN7EXAMPLE"
GHP = "gh" + "p_"
GITHUB_PAT = "github" + "_pat_"
PEM_BEGIN = "-----BEGIN " + "RSA PRIVATE KEY-----"
PEM_END = "-----END " + "RSA PRIVATE KEY-----"
LONG_VALUE = "s3cr3tVALUE" + "0123456789"


def test_secret_classes_are_the_four_of_the_reference() -> None:
    assert SECRET_CLASSES == ("aws-access-key-id", "github-token", "private-key", "credential-assignment")


@pytest.mark.parametrize(
    "text",
    [
        AWS_KEY,
        f"key id {AWS_KEY} in the config",
        f"({AWS_KEY})",
        "AS" + "IA" + "ABCDEFGHIJ012345",
    ],
)
def test_aws_access_key_id_matches_on_word_boundaries(text: str) -> None:
    assert scan_secrets(text) == "aws-access-key-id"


@pytest.mark.parametrize(
    "text",
    [
        AWS_KEY + "X",  # 17 characters after the prefix: a longer word, not a key id
        "X" + AWS_KEY,
        "AK" + "IA" + "IOSFODNN7EXAMPL",  # 15 characters
        "ak" + "ia" + "iosfodnn7example",  # lowercase
        "AK" + "IA" + "iosfodnn7example",
        "AKIAS are a made-up plural and AKIA alone is harmless",
    ],
)
def test_aws_access_key_id_ignores_longer_words_short_runs_and_lowercase(text: str) -> None:
    assert scan_secrets(text) is None


@pytest.mark.parametrize("prefix", ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"])
def test_github_token_matches_each_classic_prefix_with_36_alnum(prefix: str) -> None:
    token = prefix + "a1B2" * 9
    assert len(token) == len(prefix) + 36
    assert scan_secrets(f"token {token} here") == "github-token"


def test_github_token_needs_at_least_36_alnum_after_the_prefix() -> None:
    assert scan_secrets(GHP + "a" * 35) is None
    assert scan_secrets(GHP + "a" * 36) == "github-token"
    assert scan_secrets(GHP + "a" * 80) == "github-token"
    assert scan_secrets(GHP + "a" * 20 + "-" + "a" * 20) is None


def test_github_token_ignores_unknown_prefixes_and_uppercase() -> None:
    assert scan_secrets("gh" + "x_" + "a" * 40) is None
    assert scan_secrets("GH" + "P_" + "a" * 40) is None


def test_github_fine_grained_pat_needs_22_alnum_or_underscore() -> None:
    assert scan_secrets(GITHUB_PAT + "11ABCDEFG_" + "x" * 12) == "github-token"
    assert scan_secrets(GITHUB_PAT + "x" * 21) is None
    assert scan_secrets("the github" + "_pat_ prefix is documented") is None


def test_private_key_needs_both_the_begin_and_the_private_key_marker() -> None:
    assert scan_secrets(f"{PEM_BEGIN}\nMIIEow...\n{PEM_END}") == "private-key"
    assert scan_secrets("-----BEGIN " + "OPENSSH PRIVATE KEY-----") == "private-key"
    assert scan_secrets("-----BEGIN CERTIFICATE-----\nMIIC...\n-----END CERTIFICATE-----") is None
    assert scan_secrets("paste the PRIVATE KEY" + "----- footer only") is None
    assert scan_secrets("-----BEGIN" + " and nothing else") is None


@pytest.mark.parametrize(
    "text",
    [
        f"api_key={LONG_VALUE}",
        f'api_key = "{LONG_VALUE}"',
        f"api-key: {LONG_VALUE}",
        f"APIKEY='{LONG_VALUE}'",
        f"client_secret: {LONG_VALUE}",
        f"Client_Secret:{LONG_VALUE}",
        f"secret_key = {LONG_VALUE}",
        f"secret-key={LONG_VALUE}",
        f"ACCESS_TOKEN={LONG_VALUE}",
        f"access-token: {LONG_VALUE}",
        f"auth_token={LONG_VALUE}",
        f"Auth-Token: {LONG_VALUE}",
        f"aws_secret_access_key = {LONG_VALUE}",
        f"private_token: {LONG_VALUE}",
        "export api_key=abcdefghijklmno5",  # exactly 16 characters, one digit at the end
        "api_key=a/b+c=d.e_f-g0hijklm",
    ],
)
def test_credential_assignment_matches_key_names_case_insensitively(text: str) -> None:
    assert scan_secrets(text) == "credential-assignment"


@pytest.mark.parametrize(
    "text",
    [
        'api_key = "your-api-key-goes-here"',  # long, but no digit
        "api_key=abc123",  # digit, but shorter than 16
        "api_key=abcdefghijklmn5",  # 15 characters
        f"my_api_key={LONG_VALUE}",  # no word boundary before the key name
        f"xapi_key={LONG_VALUE}",
        f"api_key is {LONG_VALUE}",  # no = or :
        f"password={LONG_VALUE}",  # not one of the key names
        "set the api_key in your environment",
        f"api_key = \n{LONG_VALUE}",  # the value is on the next line
    ],
)
def test_credential_assignment_ignores_placeholders_short_values_and_other_keys(text: str) -> None:
    assert scan_secrets(text) is None


def test_credential_assignment_digit_must_be_inside_the_value_run() -> None:
    assert scan_secrets("api_key=abcdefghijklmnopqrstu 1") is None
    assert scan_secrets("api_key=abcdefghijklmnopqrstu\u0661") is None  # ARABIC-INDIC DIGIT ONE


def test_scan_secrets_returns_the_first_match_across_texts_in_order() -> None:
    assert scan_secrets("clean", f"api_key={LONG_VALUE}", AWS_KEY) == "credential-assignment"
    assert scan_secrets() is None
    assert scan_secrets("", "plain words") is None


def test_scan_secrets_checks_each_text_on_its_own() -> None:
    assert scan_secrets("-----BEGIN RSA", "PRIVATE KEY" + "-----") is None


def test_find_secret_in_fields_names_the_field_and_class() -> None:
    token = GHP + "Z" * 36
    assert find_secret_in_fields("t", "d", f"body with {token}", []) == SecretMatch("body", "github-token")
    assert find_secret_in_fields(AWS_KEY, "", "b", []) == ("title", "aws-access-key-id")
    assert find_secret_in_fields("t", f"api_key={LONG_VALUE}", "b", []) == SecretMatch(
        "description", "credential-assignment"
    )
    assert find_secret_in_fields("t", "", "b", ["ok", PEM_BEGIN + PEM_END]) == ("tags", "private-key")
    assert find_secret_in_fields("title", "description", "body", ["tag"]) is None


def test_find_secret_in_fields_reports_the_earliest_field() -> None:
    match = find_secret_in_fields("t", AWS_KEY, GHP + "a" * 36, [AWS_KEY])
    assert match == SecretMatch("description", "aws-access-key-id")


def test_secret_match_description_never_contains_the_secret() -> None:
    token = GHP + "Q" * 40
    match = find_secret_in_fields("t", "", token, [])
    assert match is not None
    message = match.describe()
    assert message == "body matches secret class 'github-token'"
    assert token not in message
    assert token not in repr(match)


_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=12)
_PROSE_TOKEN = st.one_of(
    _WORD,
    _WORD.map(str.capitalize),
    st.integers(min_value=0, max_value=9999).map(str),
    st.tuples(_WORD, st.sampled_from(",.;:!?")).map("".join),
    st.sampled_from(["the", "api", "key", "secret", "token", "private", "BEGIN", "KEY", "AKIA", "ghp"]),
)


@given(st.lists(_PROSE_TOKEN, max_size=60).map(" ".join))
def test_ordinary_prose_never_matches_a_secret_class(prose: str) -> None:
    assert scan_secrets(prose) is None
    assert find_secret_in_fields(prose, prose, prose, [prose]) is None


# The cheap pre-check in front of the credential pattern must never clear a text the pattern
# refuses: compare the scan with the bare patterns, field by field, on texts glued from
# secret-shaped and ordinary fragments (case variants, and the two non-ASCII letters that
# match key-name letters case-insensitively: the long s and the Kelvin sign).
_FRAGMENTS = [
    AWS_KEY,
    AWS_KEY.lower(),
    GHP + "a" * 36,
    GITHUB_PAT + "b" * 22,
    PEM_BEGIN,
    PEM_END,
    "api_key",
    "API-KEY",
    " = ",
    ": '",
    LONG_VALUE,
    "your-api-key-goes-here",
    f"API-KEY = {LONG_VALUE}",
    f"Auth_Token: '{LONG_VALUE}",
    f"client_\u017fecret = {LONG_VALUE}",
    f"api_\u212aey={LONG_VALUE}",
    f"{PEM_BEGIN}\nMIIE\n{PEM_END}",
    "x",
    " ",
    "\n",
    "é",
    "_",
]
_glued = st.lists(st.sampled_from(_FRAGMENTS), max_size=6).map("".join)


def _bare_patterns(text: str) -> str | None:
    if secrets._AWS_ACCESS_KEY_ID.search(text):
        return "aws-access-key-id"
    if secrets._GITHUB_TOKEN.search(text):
        return "github-token"
    if secrets._PRIVATE_KEY_BEGIN in text and secrets._PRIVATE_KEY_END in text:
        return "private-key"
    if secrets._CREDENTIAL_ASSIGNMENT.search(text):
        return "credential-assignment"
    return None


@given(title=_glued, description=_glued, body=_glued, tags=st.lists(_glued, max_size=3))
def test_the_scan_refuses_exactly_what_the_bare_patterns_match(
    title: str, description: str, body: str, tags: list[str]
) -> None:
    expected = None
    for field, text in [("title", title), ("description", description), ("body", body)] + [
        ("tags", tag) for tag in tags
    ]:
        found = _bare_patterns(text)
        if found is not None:
            expected = SecretMatch(field, found)
            break
    assert find_secret_in_fields(title, description, body, tags) == expected
