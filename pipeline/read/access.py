"""Who may use a served dashboard, and whether it may write: a shared secret and a read-only switch.

``ofc dashboard`` (the CLI) turns ``--password-file`` or a generated token into an
:class:`AccessSecret` and hands the dashboard process only its salted hash (in the environment
variable :data:`SECRET_ENV`); the dashboard checks what a visitor types (or the ``?token=`` of the
link it printed) against it. ``--read-only`` sets :data:`READ_ONLY_ENV`: the dashboard then offers
no page that writes, and :func:`writes_forbidden` makes
:func:`pipeline.read.source.database_lock`, the one door every write of the dashboard goes
through, refuse.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import os
import secrets
from dataclasses import dataclass

__all__ = [
    "READ_ONLY_ENV",
    "SECRET_ENV",
    "AccessSecret",
    "WritesForbidden",
    "is_loopback",
    "new_token",
    "writes_forbidden",
]

SECRET_ENV = "OFC_DASHBOARD_SECRET"
"""Environment variable holding the salted hash of the dashboard's password or token."""

READ_ONLY_ENV = "OFC_DASHBOARD_READ_ONLY"
"""Environment variable that makes the dashboard read-only when set to ``1``."""

_ITERATIONS = 200_000
_ALGORITHM = "pbkdf2-sha256"


@dataclass(frozen=True, slots=True)
class AccessSecret:
    """The salted PBKDF2 hash of a password or token (never the secret itself)."""

    salt: bytes
    digest: bytes
    iterations: int = _ITERATIONS

    @classmethod
    def of(cls, secret: str) -> AccessSecret:
        """Hash a new secret with a fresh random salt."""
        salt = secrets.token_bytes(16)
        return cls(salt, _hash(secret, salt, _ITERATIONS), _ITERATIONS)

    def encoded(self) -> str:
        """The hash as one line of text (for :data:`SECRET_ENV`)."""
        return f"{_ALGORITHM}${self.iterations}${self.salt.hex()}${self.digest.hex()}"

    @classmethod
    def decode(cls, text: str) -> AccessSecret:
        """Read :meth:`encoded` text back; raises ValueError for anything else."""
        algorithm, iterations, salt, digest = text.strip().split("$")
        if algorithm != _ALGORITHM or int(iterations) < 1:
            raise ValueError(f"not an {_ALGORITHM} access hash")
        return cls(bytes.fromhex(salt), bytes.fromhex(digest), int(iterations))

    def accepts(self, attempt: str) -> bool:
        """True when ``attempt`` is the secret (compared in constant time)."""
        return hmac.compare_digest(_hash(attempt, self.salt, self.iterations), self.digest)


def _hash(secret: str, salt: bytes, iterations: int) -> bytes:
    return hashlib.pbkdf2_hmac("sha256", secret.encode("utf-8"), salt, iterations)


def new_token() -> str:
    """A random access token for a dashboard served to the network (about 144 bits)."""
    return secrets.token_urlsafe(18)


def is_loopback(host: str) -> bool:
    """True when a listening address is reachable from this machine only (127.0.0.0/8, ::1,
    ``localhost``)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class WritesForbidden(PermissionError):
    """The dashboard is read-only (``ofc dashboard --read-only``): nothing may be written."""


def writes_forbidden() -> bool:
    """True when this process is a read-only dashboard (:data:`READ_ONLY_ENV` is ``1``: set by
    ``ofc dashboard --read-only`` for the Streamlit process it starts, and read at every write,
    so nothing can switch it off from a page)."""
    return os.environ.get(READ_ONLY_ENV) == "1"
