"""Boot guards on the state directory, in process: every refusal is a StorageRefused (-32014)
naming the path, and a refused boot leaves the directory free for the next attempt."""

from __future__ import annotations

from pathlib import Path

import pytest

from meta_memory import StorageRefused
from meta_memory.runtime import MetaRuntime
from meta_memory.storage.adopt import adopt_predecessor
from meta_memory.storage.layout import StateLayout


def test_a_leftover_predecessor_stage_alone_also_refuses_boot(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "elephant-memory-state.tmp").write_bytes(b"{")
    with pytest.raises(StorageRefused, match="predecessor") as refused:
        MetaRuntime.open(state)
    assert refused.value.code == -32014 and str(state) in refused.value.message


def test_a_refused_boot_releases_the_lock_so_the_fixed_dir_boots(tmp_path: Path) -> None:
    state = tmp_path / "state"
    (state / "agent-memory").mkdir(parents=True)
    (state / "agent-memory-sqlite").mkdir()
    with pytest.raises(StorageRefused, match="file-name twins"):
        MetaRuntime.open(state)
    (state / "agent-memory-sqlite").rmdir()
    with MetaRuntime.open(state) as runtime:
        assert runtime.state_dir == state


def test_a_lock_file_that_cannot_be_opened_is_a_storage_refusal_naming_it(tmp_path: Path) -> None:
    state = tmp_path / "state"
    (state / ".meta-runtime.lock").mkdir(parents=True)  # a directory where the lock file belongs
    with pytest.raises(StorageRefused, match="lock") as refused:
        MetaRuntime.open(state)
    assert str(state / ".meta-runtime.lock") in refused.value.message


def test_a_state_dir_that_cannot_be_created_is_a_storage_refusal_naming_it(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a directory")
    with pytest.raises(StorageRefused, match="cannot create state dir") as refused:
        MetaRuntime.open(tmp_path / "file" / "state")
    assert str(tmp_path / "file" / "state") in refused.value.message


def test_a_closed_runtime_frees_the_state_dir_and_close_is_idempotent(tmp_path: Path) -> None:
    first = MetaRuntime.open(tmp_path / "state")
    with pytest.raises(StorageRefused, match="another meta runtime"):
        MetaRuntime.open(tmp_path / "state")
    first.close()
    first.close()
    MetaRuntime.open(tmp_path / "state").close()


@pytest.mark.parametrize("exists", [False, True], ids=["no-state-dir", "no-predecessor"])
def test_adoption_with_nothing_to_adopt_is_refused_and_creates_nothing(tmp_path: Path, exists: bool) -> None:
    state = tmp_path / "state"
    if exists:
        state.mkdir()
    with pytest.raises(StorageRefused) as refused:
        adopt_predecessor(StateLayout.at(state), apply=True)
    assert str(state) in refused.value.message
    assert (sorted(state.iterdir()) if exists else state.exists()) == ([] if exists else False)
