"""Capturing a publication source (``--spec FILE`` or ``--bundle DIR``) and its digest.

A spec is one regular file named ``*.kdl`` (or ``agent.kdl.candidate``), opened without following
a symlink; its digest is the SHA-256 of its bytes. A bundle is a directory of real directories and
regular files with ``agent.kdl`` at its top (symlinks and special files are refused); its digest
is the SHA-256 over the domain ``st2.agent-publish-bundle.v1`` followed, for every file in byte
order of its relative path, by ``path NUL size NUL sha256(content) LF``, so renaming, editing or
adding any file changes it. ``st2 agent digest`` prints this digest and ``st2 agent publish
--input-sha256`` requires it, binding publication to exactly what the caller reviewed.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from st2.base.digest import sha256
from st2.fs.read import NotRegular, read_regular

BUNDLE_DOMAIN = b"st2.agent-publish-bundle.v1\0"
CANDIDATE_NAME = "agent.kdl.candidate"
BUNDLE_MAX_FILES = 256
BUNDLE_MAX_BYTES = 32 * 1024 * 1024


class SourceRefused(Exception):
    """The source cannot be captured; nothing was written."""

    def __init__(self, message: str, code: str = "invalid-source") -> None:
        super().__init__(f"[{code}] {message}")
        self.code = code


@dataclass(frozen=True)
class Captured:
    kind: str                                   # "spec" or "bundle"
    declaration: bytes                          # the agent.kdl bytes
    sha256: str                                 # the source digest
    files: dict[str, tuple[bytes, int]] = field(default_factory=dict)   # bundle: path -> (bytes, mode)

    def wire(self) -> dict:
        """The ``st2.agent-source-digest.v1`` body, through its wire model."""
        from st2.authoring.wire import SourceDigest

        return SourceDigest(kind=self.kind, sha256=self.sha256).wire()


def _read_regular(path: Path) -> tuple[bytes, int]:
    try:
        return read_regular(path, BUNDLE_MAX_BYTES)
    except OSError as error:
        raise SourceRefused(str(error) if isinstance(error, NotRegular) else f"{path}: {error.strerror}") from error


def capture_spec(path: Path) -> Captured:
    path = Path(path)
    if not (path.name.endswith(".kdl") or path.name == CANDIDATE_NAME):
        raise SourceRefused(f"spec source must be named `*.kdl` or `{CANDIDATE_NAME}`, found {path}")
    data, _ = _read_regular(path)
    return Captured("spec", data, sha256(data).hexdigest())


def capture_bundle(directory: Path) -> Captured:
    directory = Path(directory)
    try:
        mode = os.lstat(directory).st_mode
    except OSError as error:
        raise SourceRefused(f"{directory}: {error.strerror}") from error
    if not stat.S_ISDIR(mode):
        raise SourceRefused(f"{directory}: a bundle must be a real directory")
    files: dict[str, tuple[bytes, int]] = {}
    _walk(directory, "", files)
    if "agent.kdl" not in files:
        raise SourceRefused(f"{directory}: a bundle needs agent.kdl at its top")
    digest = sha256(BUNDLE_DOMAIN)
    for relative in sorted(files, key=lambda name: name.encode()):
        data, _ = files[relative]
        digest.update(relative.encode() + b"\0" + str(len(data)).encode() + b"\0"
                      + sha256(data).hexdigest().encode() + b"\n")
    return Captured("bundle", files["agent.kdl"][0], digest.hexdigest(), files)


def _walk(directory: Path, prefix: str, files: dict) -> None:
    with os.scandir(directory) as iterator:
        entries = sorted(iterator, key=lambda entry: entry.name)
    for entry in entries:
        relative = f"{prefix}{entry.name}"
        info = entry.stat(follow_symlinks=False)
        if stat.S_ISDIR(info.st_mode):
            _walk(Path(entry.path), relative + "/", files)
        elif stat.S_ISREG(info.st_mode):
            files[relative] = _read_regular(Path(entry.path))
            if len(files) > BUNDLE_MAX_FILES or sum(len(data) for data, _ in files.values()) > BUNDLE_MAX_BYTES:
                raise SourceRefused(f"{directory}: a bundle holds at most {BUNDLE_MAX_FILES} files and "
                                    f"{BUNDLE_MAX_BYTES} bytes")
        else:
            what = "a symlink" if stat.S_ISLNK(info.st_mode) else "a special file"
            raise SourceRefused(f"{entry.path}: is {what}; a bundle holds only directories and regular files")
