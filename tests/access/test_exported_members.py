from __future__ import annotations

import meta_memory
import meta_memory.access


def test_the_access_package_exports_exactly_its_public_surface() -> None:
    assert sorted(meta_memory.access.__all__) == sorted(
        [
            "ACTIONS",
            "ANONYMOUS",
            "RPC_ACCESS",
            "AccessEngine",
            "AuthenticationFailed",
            "BearerAuthenticator",
            "Decision",
            "IdentityAttributes",
            "MethodAccess",
            "Principal",
            "Resource",
            "Roster",
            "RosterProvider",
            "UnknownAction",
            "authorize_method",
            "decide_actions",
            "hash_token",
            "is_known_action",
            "method_access",
            "pattern_matches",
            "requires_quarantine_review",
            "validate_pattern",
        ]
    )


def test_every_exported_name_resolves_and_the_auth_error_is_a_meta_error() -> None:
    for name in meta_memory.access.__all__:
        assert getattr(meta_memory.access, name) is not None, name
    assert issubclass(meta_memory.access.AuthenticationFailed, meta_memory.MetaError)
