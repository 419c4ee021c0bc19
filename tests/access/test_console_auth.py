"""Bearer-token authentication: hashes in config, principals out, and no credential ever
silently downgraded to anonymous."""

from __future__ import annotations

import hashlib

import pytest

from meta_memory.access import ANONYMOUS, AuthenticationFailed, BearerAuthenticator, Principal, hash_token
from meta_memory.config import load_config_dict
from meta_memory.errors import ConfigError

ALICE_TOKEN = "alice-s3cret.token~1"
BOB_TOKEN = "Ym9iLXRva2Vu=="


def _authenticator() -> BearerAuthenticator:
    config = load_config_dict(
        {
            "console": {
                "auth": {
                    "tokens": [
                        {
                            "token_sha256": hash_token(ALICE_TOKEN),
                            "subject": "alice",
                            "groups": ["ops", "sre"],
                        },
                        {"token_sha256": hash_token(BOB_TOKEN), "subject": "bob"},
                    ]
                }
            }
        }
    )
    return BearerAuthenticator.for_console(config.console)


def test_a_token_hashes_to_the_lowercase_sha256_hex_of_its_text() -> None:
    assert hash_token("abc") == hashlib.sha256(b"abc").hexdigest()
    assert hash_token("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


@pytest.mark.parametrize("token", ["", "has space", "tab\tbed", "ünïcode", "a=b", "line\n"])
def test_a_token_no_client_could_present_is_refused_when_hashed(token: str) -> None:
    with pytest.raises(ValueError, match="console token must be non-empty"):
        hash_token(token)


def test_the_right_token_authenticates_as_its_subject_with_its_groups() -> None:
    auth = _authenticator()
    assert auth.authenticate(f"Bearer {ALICE_TOKEN}") == Principal("alice", frozenset({"ops", "sre"}))
    assert auth.authenticate(f"bearer {BOB_TOKEN}") == Principal("bob")


def test_once_tokens_are_configured_no_authorization_header_fails_as_missing() -> None:
    with pytest.raises(AuthenticationFailed) as failed:
        _authenticator().authenticate(None)
    assert failed.value.reason == "missing_token" and failed.value.http_status == 401
    # RFC 6750 3.1: no error code for a request that carried no credential.
    assert failed.value.www_authenticate == 'Bearer realm="meta-console"'
    assert failed.value.message == "authentication required"


def test_anonymous_beside_tokens_exists_only_when_allowed_explicitly() -> None:
    config = load_config_dict(
        {
            "console": {
                "auth": {
                    "allow_anonymous": True,
                    "tokens": [{"token_sha256": hash_token(ALICE_TOKEN), "subject": "alice"}],
                }
            }
        }
    )
    auth = BearerAuthenticator.for_console(config.console)
    assert auth.authenticate(None) is ANONYMOUS
    assert ANONYMOUS.is_anonymous and ANONYMOUS.groups == frozenset()
    assert auth.authenticate(f"Bearer {ALICE_TOKEN}") == Principal("alice")
    with pytest.raises(AuthenticationFailed):
        auth.authenticate("Bearer wrong")  # a bad credential never degrades to anonymous


def test_a_console_with_no_token_can_refuse_anonymous_too() -> None:
    auth = BearerAuthenticator.for_console(
        load_config_dict({"console": {"auth": {"allow_anonymous": False}}}).console
    )
    with pytest.raises(AuthenticationFailed) as failed:
        auth.authenticate(None)
    assert failed.value.reason == "missing_token"


def test_an_application_key_authenticates_with_its_realms_on_its_own_surface() -> None:
    config = load_config_dict(
        {
            "rpc": {
                "auth": {
                    "tokens": [
                        {
                            "token_sha256": hash_token(ALICE_TOKEN),
                            "subject": "tenant-a",
                            "realms": ["a", " b "],
                        },
                        {"token_sha256": hash_token(BOB_TOKEN), "subject": "ops"},
                    ]
                }
            }
        }
    )
    auth = BearerAuthenticator.for_rpc(config.rpc)
    tenant = auth.authenticate(f"Bearer {ALICE_TOKEN}")
    assert tenant == Principal("tenant-a", realms=frozenset({"a", "b"}))
    assert tenant.may_use_realm("a") and not tenant.may_use_realm("c")
    assert auth.authenticate(f"Bearer {BOB_TOKEN}").realms is None
    with pytest.raises(AuthenticationFailed) as failed:
        auth.authenticate(None)
    assert failed.value.www_authenticate == 'Bearer realm="meta-rpc"'
    console = BearerAuthenticator.for_console(config.console)
    with pytest.raises(AuthenticationFailed):  # an application key is not a console token
        console.authenticate(f"Bearer {ALICE_TOKEN}")


def test_a_wrong_token_fails_instead_of_becoming_anonymous() -> None:
    with pytest.raises(AuthenticationFailed) as failed:
        _authenticator().authenticate("Bearer not-a-configured-token")
    assert failed.value.reason == "invalid_token" and failed.value.http_status == 401
    assert failed.value.www_authenticate == 'Bearer realm="meta-console", error="invalid_token"'
    assert failed.value.code == -32030 and failed.value.data == {
        "kind": "unauthenticated",
        "reason": "invalid_token",
    }


def test_the_stored_hash_presented_as_a_token_does_not_authenticate() -> None:
    with pytest.raises(AuthenticationFailed):
        _authenticator().authenticate(f"Bearer {hash_token(ALICE_TOKEN)}")


@pytest.mark.parametrize(
    "header",
    [
        "",
        "Bearer",
        "Bearer ",
        f"Basic {ALICE_TOKEN}",
        f"Token {ALICE_TOKEN}",
        f"Bearer {ALICE_TOKEN} extra",
        "Bearer a b",
    ],
)
def test_a_malformed_authorization_header_fails_as_an_invalid_request(header: str) -> None:
    with pytest.raises(AuthenticationFailed) as failed:
        _authenticator().authenticate(header)
    assert failed.value.reason == "invalid_request" and failed.value.http_status == 400


def test_without_configured_tokens_any_presented_token_fails() -> None:
    auth = BearerAuthenticator.for_console(load_config_dict({}).console)
    assert not auth.configured and auth.authenticate(None) is ANONYMOUS
    with pytest.raises(AuthenticationFailed):
        auth.authenticate(f"Bearer {ALICE_TOKEN}")


def test_two_entries_with_the_same_token_hash_are_refused() -> None:
    digest = hash_token(ALICE_TOKEN)
    with pytest.raises(ConfigError, match="same token_sha256"):
        BearerAuthenticator([(digest, Principal("alice")), (digest, Principal("bob"))])


def test_config_refuses_a_plaintext_token_where_its_hash_belongs() -> None:
    with pytest.raises(ConfigError, match="hash-token"):
        load_config_dict(
            {"console": {"auth": {"tokens": [{"token_sha256": ALICE_TOKEN, "subject": "alice"}]}}}
        )


def test_an_anonymous_principal_cannot_belong_to_a_group() -> None:
    with pytest.raises(ValueError, match="anonymous principal belongs to no group"):
        Principal(None, frozenset({"ops"}))
