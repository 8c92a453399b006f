"""SHA-256 without loading OpenSSL.

``hashlib`` binds ``sha256`` to OpenSSL when it can, and importing it maps libcrypto into the
process: 4.6 MiB of resident memory per DING notifier (one per seat, hundreds per host) and
several milliseconds on every hook. CPython always builds its own SHA-256 module as well
(``_sha256`` up to 3.11, ``_sha2`` from 3.12); the digests are identical. Fall back to
``hashlib`` where neither exists.
"""

from __future__ import annotations

try:  # CPython 3.11
    from _sha256 import sha256
except ImportError:  # pragma: no cover - CPython 3.12+, or another implementation
    try:
        from _sha2 import sha256
    except ImportError:
        from hashlib import sha256

__all__ = ["sha256"]
