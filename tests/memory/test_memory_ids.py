"""Memory ids: unique per process, sortable by creation time, carrying the process id."""

from __future__ import annotations

import os

from meta_memory.memory.records import content_hash, new_memory_id


def test_ids_name_the_process_and_count_up_within_it() -> None:
    digest = content_hash("t", "b")
    first, second = new_memory_id(digest, 0x10), new_memory_id(digest, 0x10)
    assert first != second
    assert first.split("-")[2] == second.split("-")[2] == f"{os.getpid():x}"
    assert int(second.split("-")[3], 16) > int(first.split("-")[3], 16)
    assert first.startswith("mem-10-") and first.endswith("-" + digest[:16])


def test_a_forked_child_mints_ids_with_its_own_process_id() -> None:
    """The process part is computed once, not per id: a fork must recompute it, or parent and
    child (whose counters continue from the same value) would mint the same ids."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report one id, then leave without running the parent's cleanup
        os.close(read)
        os.write(write, new_memory_id(content_hash("t", "b"), 0x10).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        child_id = pipe.read().decode()
    os.waitpid(pid, 0)
    assert child_id.split("-")[2] == f"{pid:x}" != f"{os.getpid():x}"
