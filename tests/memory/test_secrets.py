# Fake secrets are assembled from fragments so no provider-shaped literal sits contiguous in the source
# (keeps repository secret scanners quiet); the assembled strings are what the patterns see. The corpus
# of every class and spelling is tests/security/secrets_corpus/, checked by tests/security/.
from __future__ import annotations

import re
import subprocess
import sys
import sys as _sys
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from meta_memory.memory.records import Author, Evidence, Provenance, VerificationClaim
from meta_memory.memory.secrets import (
    SECRET_CLASSES,
    SecretMatch,
    find_secret_in_fields,
    find_secret_in_provenance,
    normalize_for_scan,
    scan_secrets,
)

AWS_KEY = "AK" + "IA" + "IOSFODNN7QWERTY1"
GHP = "gh" + "p_"
GITHUB_PAT = "github" + "_pat_"
PEM_BEGIN = "-----BEGIN " + "RSA PRIVATE KEY-----"
PEM_END = "-----END " + "RSA PRIVATE KEY-----"
LONG_VALUE = "s3cr3tVALUE" + "0123456789"
RANDOM_36 = "q7Rk2Lm9Xz4Wp1Vb8Nc3Hd6Fs0Gt5Jy2Ua7E"


def test_secret_classes_keep_the_four_of_the_reference_and_are_kebab_case() -> None:
    assert {"aws-access-key-id", "github-token", "private-key", "credential-assignment"} <= set(
        SECRET_CLASSES
    )
    assert len(SECRET_CLASSES) == len(set(SECRET_CLASSES)) == 17
    assert all(re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", name) for name in SECRET_CLASSES)
    assert SECRET_CLASSES[-1] == "credential-assignment"  # the generic rule is reported last


@pytest.mark.parametrize(
    "text", [AWS_KEY, f"key id {AWS_KEY} in the config", f"({AWS_KEY})", f"id_{AWS_KEY}"]
)
def test_aws_access_key_id_matches_where_no_letter_or_digit_is_glued_to_it(text: str) -> None:
    assert scan_secrets(text) == "aws-access-key-id"


@pytest.mark.parametrize(
    "text",
    [
        AWS_KEY + "X",  # 17 characters after the prefix: a longer word, not a key id
        "X" + AWS_KEY,
        AWS_KEY[:-1],  # 15 characters
        AWS_KEY.lower(),
        "AK" + "IA" + "XXXXXXXXXXXXXXXX",  # a masked example
        "AKIAS are a made-up plural and AKIA alone is harmless",
    ],
)
def test_aws_access_key_id_ignores_longer_words_short_runs_lowercase_and_masks(text: str) -> None:
    assert scan_secrets(text) is None


def test_a_stored_tag_is_lowercase_so_a_tag_is_matched_again_without_case() -> None:
    assert find_secret_in_fields("t", "", "b", [AWS_KEY.lower()]) == ("tags", "aws-access-key-id")
    google = "AI" + "za" + "Sy" + RANDOM_36[:33]
    assert find_secret_in_fields("t", "", "b", [google.lower()]) == ("tags", "google-api-key")
    assert find_secret_in_fields("t", "", AWS_KEY.lower(), []) is None  # a body keeps its case


@pytest.mark.parametrize("prefix", ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"])
def test_github_token_matches_each_classic_prefix_with_36_alnum(prefix: str) -> None:
    assert scan_secrets(f"token {prefix}{RANDOM_36} here") == "github-token"
    assert scan_secrets(f"glued{prefix}{RANDOM_36}") == "github-token"  # no leading boundary (REFERENCE 4.5)


def test_github_token_needs_36_alnum_and_fine_grained_ones_22() -> None:
    assert scan_secrets(GHP + RANDOM_36[:35]) is None
    assert scan_secrets(GHP + "a" * 36) == "github-token"
    assert scan_secrets(GHP + "a" * 20 + "-" + "a" * 20) is None
    assert scan_secrets("GH" + "P_" + RANDOM_36) is None
    assert scan_secrets(GITHUB_PAT + "11ABCDEFG_" + "k3" * 6) == "github-token"
    assert scan_secrets(GITHUB_PAT + "k" * 21) is None
    assert scan_secrets("the github" + "_pat_ prefix is documented") is None


@pytest.mark.parametrize(
    "text",
    [
        GHP + "x" * 36,
        "sk" + "_live_" + "x" * 24,
        "sk" + "-proj-" + "..." + RANDOM_36,
        "xo" + "xb-" + "1234-" + "*" * 20,
        "AI" + "za" + "X" * 35,
    ],
)
def test_masked_provider_tokens_are_examples_not_keys(text: str) -> None:
    assert scan_secrets(text) is None


@pytest.mark.parametrize(
    ("text", "secret_class"),
    [
        ("sk" + "-proj-" + RANDOM_36 + "_-Ab12", "openai-api-key"),
        ("sk" + "-" + RANDOM_36[:20] + "T3Blbk" + "FJ" + RANDOM_36[:20], "openai-api-key"),
        ("sk" + "-ant-api03-" + RANDOM_36 * 2, "anthropic-api-key"),
        ("AI" + "za" + "Sy" + RANDOM_36[:33], "google-api-key"),
        ("sk" + "_live_" + RANDOM_36[:24], "stripe-key"),
        ("rk" + "_test_" + RANDOM_36[:24], "stripe-key"),
        ("wh" + "sec_" + RANDOM_36[:32], "stripe-key"),
        ("xo" + "xb-" + "123456789012-" + RANDOM_36[:24], "slack-token"),
        ("https://hooks.slack" + ".com/services/T0ABC/B0DEF/" + RANDOM_36[:24], "slack-token"),
        ("gl" + "pat-" + RANDOM_36[:20], "gitlab-token"),
        ("np" + "m_" + RANDOM_36, "npm-token"),
        ("py" + "pi-AgEIcHlwaS5vcmc" + RANDOM_36 * 2, "pypi-token"),
        ("hf" + "_" + "qRkLmXzWpVbNcHdFsGtJyUaEoIuYtReWqA", "huggingface-token"),
        ("SG" + "." + RANDOM_36[:22] + "." + (RANDOM_36 * 2)[:43], "sendgrid-key"),
    ],
)
def test_each_provider_token_is_its_own_class(text: str, secret_class: str) -> None:
    assert scan_secrets(f"the key is {text}, rotate it") == secret_class


@pytest.mark.parametrize(
    "text",
    [
        "ri" + "sk-" + RANDOM_36,  # "sk-" inside a word
        "sk-learn is a library",
        "task" + "_test_" + RANDOM_36,  # "k_test_" after a letter that is not s or r
        "disk-based cache",
        "eyJ is how a base64 JSON object starts",
    ],
)
def test_a_provider_prefix_inside_a_word_is_that_word(text: str) -> None:
    assert scan_secrets(text) is None


def test_private_key_blocks_pem_openssh_pgp_and_putty_but_not_certificates() -> None:
    assert scan_secrets(f"{PEM_BEGIN}\nMIIEow...\n{PEM_END}") == "private-key"
    assert scan_secrets("-----BEGIN " + "OPENSSH PRIVATE KEY-----") == "private-key"
    assert scan_secrets("-----BEGIN " + "PGP PRIVATE KEY BLOCK-----\n\nlQOYBF...") == "private-key"
    assert scan_secrets("PuTTY-User-" + "Key-File-3: ssh-ed25519\nPrivate-Lines: 1\nAAAA") == "private-key"
    assert scan_secrets("-----BEGIN CERTIFICATE-----\nMIIC...\n-----END CERTIFICATE-----") is None
    assert scan_secrets("-----BEGIN PUBLIC KEY-----") is None
    assert scan_secrets("paste the PRIVATE KEY" + "----- footer only") is None


def test_a_jwt_needs_a_json_header_and_a_signature() -> None:
    header, payload = "eyJhbGciOiJIUzI1NiJ9", "eyJzdWIiOiIxMjMifQ"  # {"alg":"HS256"}, {"sub":"123"}
    signature = "Qz1x" + RANDOM_36[:39]
    assert scan_secrets(f"token {header}.{payload}.{signature}") == "jwt"
    assert scan_secrets(f"{header}.{payload}.") is None  # unsigned (alg none): grants nothing
    assert scan_secrets(f"eyJ{'A' * 20}.{payload}.{signature}") is None  # the header is not JSON
    assert scan_secrets(f"x{header}.{payload}.{signature}") is None  # inside a longer run


@pytest.mark.parametrize(
    "text",
    [
        "postgresql://app:Zq8x!pL2vT@db.internal:5432/prod",
        "DATABASE_URL=postgres://svc_orders:h7Kd9qLp2x@10.0.3.17/orders",
        "redis://:Zq8xpL2vTr@cache:6379/0",
        "mongodb+srv://ci:q7Rk2Lm9Xz4W@cluster0.example.net/db",
        "jdbc:mysql://app:Zq8x#pL2vT@db:3306/orders",
        "git clone https://deploy:" + RANDOM_36 + "@github.com/acme/tools.git",
    ],
)
def test_a_password_in_a_url_is_refused(text: str) -> None:
    assert scan_secrets(text) == "url-credentials"


@pytest.mark.parametrize(
    "text",
    [
        "postgresql://user:password@localhost/db",
        "postgres://postgres:postgres@localhost:5432/test",
        "amqp://guest:guest@localhost:5672/",
        "postgresql://app:${DB_PASSWORD}@db/orders",
        "redis://:<password>@cache:6379",
        "https://user@example.com/path?query=1",
        "http://localhost:8080?next=/a@b",
        "ssh://git@github.com:22/acme/infra.git",
    ],
)
def test_a_url_without_a_real_password_is_not_refused(text: str) -> None:
    assert scan_secrets(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "curl -H 'Authorization: Bearer " + RANDOM_36 + "' https://api.internal",
        "Authorization: Basic dXNlcjpwYXNzd29yZA==",
        "authorization=token " + RANDOM_36,
        "send Bearer " + RANDOM_36 + " with each request",
    ],
)
def test_an_authorization_header_or_bearer_token_is_refused(text: str) -> None:
    assert scan_secrets(text) == "authorization-header"


@pytest.mark.parametrize(
    "text",
    [
        "Authorization: Bearer <token>",
        "Authorization: Bearer $TOKEN",
        'headers = {"Authorization": f"Bearer {token}"}',
        "Bearer tokens are short-lived; refresh them with the refresh endpoint.",
    ],
)
def test_an_authorization_header_without_a_credential_is_not_refused(text: str) -> None:
    assert scan_secrets(text) is None


@pytest.mark.parametrize(
    "text",
    [
        f"api_key={LONG_VALUE}",
        f'api_key = "{LONG_VALUE}"',
        f"APIKEY='{LONG_VALUE}'",
        f"my_api_key={LONG_VALUE}",  # a prefixed name
        f"OPENAI_API_KEY={LONG_VALUE}",
        f"ANTHROPIC_API_KEY={LONG_VALUE}",
        f"export GITHUB_TOKEN={LONG_VALUE}",
        "password = hunter2hunter2",
        "DB_PASSWORD=hunter2hunter2",
        '{"api_key": "' + LONG_VALUE + '"}',
        f"client_secret: {LONG_VALUE}",
        f"clientSecret: '{LONG_VALUE}'",
        'dbPassword := "hunter2hunter2"',
        f"aws_secret_access_key = {LONG_VALUE}",
        "aws_secret_access_key = /k3jZq8xpL2vT9Wd4Rn7Ym1Bc6Hf0Gs5Ja2Ue8Ip3",  # starts like a path
        "passwd: Tr0ub4dor&3",
        "pwd=abc123",
        "PASSWORD=12345678",  # digits are a password's value, not a count
        "--password Zq8xpL2vTr",
        "--db-password=Zq8xpL2vTr",
        "<password>Zq8xpL2vTr</password>",
        'def connect(password: str = "Zq8xpL2vTr") -> None:',
        "'password' => 'Zq8xpL2vTr',",
        "Server=db;User Id=app;Password=Zq8xpL2vTr;",
        "my password is hunter2hunter2",
        "the API key is " + LONG_VALUE,
        "X-API-Key: " + LONG_VALUE,
        'payload = "{\\"token\\": \\"' + LONG_VALUE + '\\"}"',
    ],
)
def test_a_credential_assignment_is_refused_in_every_spelling(text: str) -> None:
    assert scan_secrets(text) == "credential-assignment"


@pytest.mark.parametrize(
    "text",
    [
        "the password is stored in the vault",
        "my token budget is 4000",
        "secret: don't tell Sam about the party",
        "password = <your password>",
        "api_key=YOUR_API_KEY",
        "token: ${TOKEN}",
        "password: ********",
        "export OPENAI_API_KEY=...",
        "password: str",
        "token: Optional[str] = None",
        "token = os.environ['TOKEN']",
        "secret = settings.SECRET_KEY",
        "PASSWORD_FILE=/run/secrets/db_password",
        "password: !vault |",
        'password: "{{ vault_db_password }}"',
        "max_tokens: 4096",
        "bypass: Tr0ub4dor&3",  # "pass" only where a name part starts
        "cache_key = a1b2c3d4e5f6a7b8",  # "key" only after api, access, secret, private, ...
        "monkey: Bonzo2024",
        "api_key is required",
        "api_key = \n" + LONG_VALUE,  # the value is on the next line
        "'password' => 'required|string|min:8|confirmed'",
        "secret=projects/my-project/secrets/db/versions/2",
        "oauth2clientsecret=OAUTH2_CLIENT_SECRET",
        "Token=fe80::1ff:fe23:4567:890a",
    ],
)
def test_a_credential_name_without_a_secret_value_is_not_refused(text: str) -> None:
    assert scan_secrets(text) is None


@pytest.mark.parametrize(
    "invisible",
    ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u180e", "\ufe0f", "\U000e0041"],
)
def test_an_invisible_character_cannot_split_a_secret_or_its_name(invisible: str) -> None:
    assert scan_secrets(AWS_KEY[:6] + invisible + AWS_KEY[6:]) == "aws-access-key-id"
    assert scan_secrets(f"pass{invisible}word = hunter2{invisible}hunter2") == "credential-assignment"
    assert scan_secrets(GHP + RANDOM_36[:10] + invisible + RANDOM_36[10:]) == "github-token"


def test_fullwidth_letters_are_read_as_ascii() -> None:
    wide = "".join(chr(ord(c) + 0xFEE0) for c in AWS_KEY)
    assert scan_secrets(f"key {wide}") == "aws-access-key-id"
    assert scan_secrets("ｐａｓｓｗｏｒｄ＝ｈｕｎｔｅｒ２ｈｕｎｔｅｒ２") == "credential-assignment"


def test_every_format_character_of_this_pythons_unicode_database_is_removed() -> None:
    # The oracle: the Unicode database's own categories, not the scanner's list.
    format_chars = [chr(c) for c in range(_sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"]
    assert len(format_chars) > 150
    assert normalize_for_scan("a" + "".join(format_chars) + "b") == "ab"
    assert normalize_for_scan("plain ascii") == "plain ascii"
    assert normalize_for_scan("Zürich ☕") == "Zürich ☕"


def test_scan_secrets_returns_the_first_match_across_texts_in_order() -> None:
    assert scan_secrets("clean", f"api_key={LONG_VALUE}", AWS_KEY) == "credential-assignment"
    assert scan_secrets() is None
    assert scan_secrets("", "plain words") is None
    assert scan_secrets("-----BEGIN RSA", "PRIVATE KEY" + "-----") is None  # each text on its own


def test_find_secret_in_fields_names_the_earliest_field_and_its_class() -> None:
    assert find_secret_in_fields("t", "d", f"body with {GHP}{RANDOM_36}", []) == SecretMatch(
        "body", "github-token"
    )
    assert find_secret_in_fields(AWS_KEY, "", "b", []) == ("title", "aws-access-key-id")
    assert find_secret_in_fields("t", f"api_key={LONG_VALUE}", "b", []) == (
        "description",
        "credential-assignment",
    )
    assert find_secret_in_fields("t", "", "b", ["ok", PEM_BEGIN]) == ("tags", "private-key")
    assert find_secret_in_fields("t", AWS_KEY, GHP + RANDOM_36, [AWS_KEY]) == (
        "description",
        "aws-access-key-id",
    )
    assert find_secret_in_fields("title", "description", "body", ["tag"]) is None


def test_provenance_texts_are_scanned_verification_evidence_by_name() -> None:
    def claim(*evidence: str, checked: str = "agent") -> Provenance:
        return Provenance(Author("agent", "a"), verification=VerificationClaim(checked, evidence))

    assert find_secret_in_provenance(claim("ran the job", f"key {AWS_KEY}")) == (
        "verification_evidence",
        "aws-access-key-id",
    )
    assert find_secret_in_provenance(claim("ok", checked=f"{PEM_BEGIN}")) == ("provenance", "private-key")
    assert find_secret_in_provenance(Provenance(Author("agent", "a"), profile=f"token={LONG_VALUE}")) == (
        "provenance",
        "credential-assignment",
    )
    assert (
        find_secret_in_provenance(
            Provenance(Author("agent", "a"), (Evidence("sess-0123456789abcdef01234567.default"),))
        )
        is None
    )


def test_secret_match_description_never_contains_the_secret() -> None:
    token = GHP + RANDOM_36
    match = find_secret_in_fields("t", "", token, [])
    assert match is not None
    assert match.describe() == "body matches secret class 'github-token'"
    assert token not in repr(match)


_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=12)
_PROSE_TOKEN = st.one_of(
    _WORD,
    _WORD.map(str.capitalize),
    st.integers(min_value=0, max_value=9999).map(str),
    st.tuples(_WORD, st.sampled_from(",.;:!?")).map("".join),
    st.sampled_from(
        [
            "the",
            "api",
            "key",
            "secret",
            "token",
            "password",
            "is",
            "was",
            "private",
            "BEGIN",
            "KEY",
            "AKIA",
            "ghp",
        ]
    ),
)


@given(st.lists(_PROSE_TOKEN, max_size=60).map(" ".join))
def test_ordinary_prose_never_matches_a_secret_class(prose: str) -> None:
    # Words (lowercase, capitalized, or followed by punctuation) and numbers below 10,000: no
    # value is a letter-and-digit run, so no rule may fire, whatever the names around it.
    assert scan_secrets(prose) is None
    assert find_secret_in_fields(prose, prose, prose, [prose]) is None


# Patterns that could scan far from each start are bounded; a text made of one prefix repeated
# would take minutes if one were quadratic. The worst measured takes well under a second.
_ADVERSARIAL = """
import sys
from meta_memory.memory.secrets import scan_secrets
n = 1 << 19
for prefix in ["eyJ", "xoxb-", "sk-", "sk-proj-", "ghp_", "-----BEGIN", "PRIVATE KEY-----", "AKIA",
               "a://b:", "password=", "password: ", "password is ", "--password ", "--a",
               "authorization: ", "bearer ", "PuTTY-User-Key-File-", "\u200b"]:
    scan_secrets(prefix * (n // len(prefix)) + ".")
    scan_secrets(prefix + "a" * n + ".")
print("done")
"""


def test_the_scan_takes_linear_time_on_a_repeated_prefix() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _ADVERSARIAL], capture_output=True, text=True, timeout=100, check=False
    )
    assert done.returncode == 0 and done.stdout.strip() == "done", done.stderr[-2000:]
