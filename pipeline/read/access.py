"""Who may use a served dashboard, and whether it may write: a shared secret, signed sign-ins
and a read-only switch.

``ofc dashboard`` (the CLI) turns ``--password-file`` or a generated token into an
:class:`AccessSecret` and hands the dashboard process only its salted hash (in the environment
variable :data:`SECRET_ENV`, its kind in :data:`SECRET_KIND_ENV`). The dashboard's server checks
every request before Streamlit sees it (``dashboard/serve.py``): a visitor signs in on its own
page with the password, or once with the token (the printed link's ``?token=``, which is spent by
its first use), and gets a :class:`SignIns` cookie, signed with a key only this process has and
valid for :data:`SIGN_IN_SECONDS_ENV` seconds (a reload or a new tab stays signed in; signing
out revokes it). Every attempt, from any visitor, passes one :class:`AttemptLimiter`: one a
second, and a back-off after repeated failures. ``--read-only`` sets :data:`READ_ONLY_ENV`: the
dashboard then offers no page that writes, and :func:`writes_forbidden` makes
:func:`pipeline.read.source.database_lock`, the one door every write of the dashboard goes
through, refuse.

The values here are pure (times are passed in): :func:`server_access` holds the one set of them
a dashboard process uses, shared by its server and its pages.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import os
import secrets
import threading
from dataclasses import dataclass, field

__all__ = [
    "DEFAULT_SIGN_IN_HOURS",
    "READ_ONLY_ENV",
    "SECRET_ENV",
    "SECRET_KIND_ENV",
    "SIGN_IN_COOKIE",
    "SIGN_IN_SECONDS_ENV",
    "AccessSecret",
    "AttemptLimiter",
    "ServerAccess",
    "SignIn",
    "SignIns",
    "WritesForbidden",
    "is_loopback",
    "new_token",
    "server_access",
    "upload_limit_mb",
    "writes_forbidden",
]

SECRET_ENV = "OFC_DASHBOARD_SECRET"
"""Environment variable holding the salted hash of the dashboard's password or token."""

READ_ONLY_ENV = "OFC_DASHBOARD_READ_ONLY"
"""Environment variable that makes the dashboard read-only when set to ``1``."""

SECRET_KIND_ENV = "OFC_DASHBOARD_SECRET_KIND"
"""``password`` (used as often as needed) or ``token`` (spent by its first use)."""

SIGN_IN_SECONDS_ENV = "OFC_DASHBOARD_SIGN_IN_SECONDS"
"""How long a sign-in lasts, in seconds (``ofc dashboard --sign-in-hours``)."""

DEFAULT_SIGN_IN_HOURS = 12
"""How long a sign-in lasts unless ``--sign-in-hours`` says otherwise."""

SIGN_IN_COOKIE = "ofc_sign_in"
"""The cookie that carries a sign-in (HttpOnly, SameSite=Lax)."""

SIGN_IN_PATH = "/_ofc/sign-in"
"""The server's sign-in page (``?next=`` the address to go to afterwards)."""

SIGN_OUT_PATH = "/_ofc/sign-out"
"""The server's sign-out address."""

MAX_UPLOAD_MB_ENV = "OFC_MAX_UPLOAD_MB"
"""Environment variable with the largest upload, in MB per file."""

DEFAULT_MAX_UPLOAD_MB = 200


def upload_limit_mb(environment: dict[str, str] | None = None) -> int:
    """The largest upload in MB per file (``$OFC_MAX_UPLOAD_MB``, default 200): the Data page's
    widget and the server (``server.maxUploadSize``) both keep to it."""
    environment = dict(os.environ) if environment is None else environment
    try:
        return max(1, int(environment.get(MAX_UPLOAD_MB_ENV, DEFAULT_MAX_UPLOAD_MB)))
    except ValueError:
        return DEFAULT_MAX_UPLOAD_MB

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


# --- sign-ins ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SignIn:
    """A valid sign-in: its id (revoked on sign-out) and when it ends (seconds since the epoch)."""

    nonce: str
    expires: float


class SignIns:
    """Signed, expiring sign-ins: ``v1.<expires>.<nonce>.<mac>``, the mac an HMAC-SHA256 under a
    key made when this object is (so a restarted dashboard signs everyone out). Thread-safe."""

    def __init__(self, key: bytes | None = None) -> None:
        self._key = key or secrets.token_bytes(32)
        self._revoked: dict[str, float] = {}
        self._lock = threading.Lock()

    def issue(self, now: float, seconds: float) -> tuple[str, SignIn]:
        """A new sign-in lasting ``seconds`` from ``now``: (cookie value, sign-in)."""
        sign_in = SignIn(secrets.token_urlsafe(12), float(int(now + seconds)))
        body = f"v1.{int(sign_in.expires)}.{sign_in.nonce}"
        return f"{body}.{self._mac(body)}", sign_in

    def verify(self, value: str | None, now: float) -> SignIn | None:
        """The sign-in a cookie value carries, or None when it is missing, forged, expired or
        revoked."""
        if not isinstance(value, str) or not value or len(value) > 200:
            return None
        body, _, mac = value.rpartition(".")
        parts = body.split(".")
        if len(parts) != 3 or parts[0] != "v1" or not hmac.compare_digest(mac, self._mac(body)):
            return None
        try:
            expires = float(int(parts[1]))
        except ValueError:
            return None
        if expires <= now:
            return None
        with self._lock:
            if parts[2] in self._revoked:
                return None
        return SignIn(parts[2], expires)

    def revoke(self, sign_in: SignIn, now: float) -> None:
        """Sign out: the sign-in is refused from now on (remembered until it would expire)."""
        with self._lock:
            self._revoked = {nonce: until for nonce, until in self._revoked.items() if until > now}
            self._revoked[sign_in.nonce] = sign_in.expires

    def _mac(self, body: str) -> str:
        digest = hmac.new(self._key, body.encode("ascii"), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")


# --- attempts ------------------------------------------------------------------------------------

ATTEMPT_SPACING_SECONDS = 1.0
"""At most one sign-in attempt a second, from all visitors together."""

FREE_FAILURES = 3
"""Failed attempts in a row before the wait grows."""

MAX_WAIT_SECONDS = 300.0
"""The longest wait after failures (5 minutes)."""


@dataclass(slots=True)
class AttemptLimiter:
    """One limit on sign-in attempts for the whole dashboard, whoever makes them: an attempt at
    most every :data:`ATTEMPT_SPACING_SECONDS`; after :data:`FREE_FAILURES` failures in a row
    the wait doubles with each failure (2, 4, 8 ... s, at most :data:`MAX_WAIT_SECONDS`); a
    success resets it. An attempt that comes too early is refused without checking it (no
    password hash is computed for it). Not thread-safe: its owner serialises calls."""

    failures: int = 0
    next_allowed: float = 0.0

    def admit(self, now: float) -> float:
        """0 when an attempt may be checked now (its slot is then taken), else the seconds to
        wait."""
        if now < self.next_allowed:
            return self.next_allowed - now
        self.next_allowed = now + ATTEMPT_SPACING_SECONDS
        return 0.0

    def failed(self, now: float) -> None:
        """The admitted attempt was wrong."""
        self.failures += 1
        self.next_allowed = max(self.next_allowed, now + self.wait_after(self.failures))

    def succeeded(self) -> None:
        """The admitted attempt was right."""
        self.failures = 0

    @staticmethod
    def wait_after(failures: int) -> float:
        """The wait after ``failures`` failures in a row.

        >>> [AttemptLimiter.wait_after(n) for n in (1, 3, 4, 5, 8, 20)]
        [1.0, 1.0, 2.0, 4.0, 32.0, 300.0]
        """
        if failures <= FREE_FAILURES:
            return ATTEMPT_SPACING_SECONDS
        return min(MAX_WAIT_SECONDS, 2.0 ** (failures - FREE_FAILURES))


# --- one dashboard process's access -------------------------------------------------------------

DEVICE_LINK_SECONDS = 15 * 60
"""How long a sign-in link made for another device stays usable (once)."""


@dataclass(slots=True)
class ServerAccess:
    """The access of one dashboard process: its secret (None: no sign-in needed), whether the
    secret is a token (spent by its first use), how long a sign-in lasts, the sign-ins, the
    attempt limiter and the one-time links made for other devices."""

    secret: AccessSecret | None
    token: bool = False
    sign_in_seconds: float = DEFAULT_SIGN_IN_HOURS * 3600.0
    sign_ins: SignIns = field(default_factory=SignIns)
    limiter: AttemptLimiter = field(default_factory=AttemptLimiter)
    spent: bool = False
    device_links: dict[bytes, float] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def from_environment(cls, environment: dict[str, str] | None = None) -> ServerAccess:
        """The access ``ofc dashboard`` set up for this process (ValueError when damaged)."""
        environment = dict(os.environ) if environment is None else environment
        encoded = environment.get(SECRET_ENV)
        secret = AccessSecret.decode(encoded) if encoded else None
        seconds = float(environment.get(SIGN_IN_SECONDS_ENV) or DEFAULT_SIGN_IN_HOURS * 3600)
        if not seconds > 0:
            raise ValueError(f"{SIGN_IN_SECONDS_ENV} must be a positive number of seconds")
        return cls(secret, environment.get(SECRET_KIND_ENV) == "token", seconds)

    def check(self, attempt: str, now: float) -> bool:
        """Whether ``attempt`` signs in: the password; or the token, once; or a device link,
        once, before it ends. The caller has been admitted by :attr:`limiter` (the hash is
        slow on purpose)."""
        if self.secret is None:
            return True
        digest = hashlib.sha256(attempt.encode("utf-8", "surrogatepass")).digest()
        with self.lock:
            until = self.device_links.pop(digest, None)
            self.device_links = {key: end for key, end in self.device_links.items() if end > now}
        if until is not None and until > now:
            return True
        if self.token and self.spent:
            return False
        if not self.secret.accepts(attempt):
            return False
        with self.lock:
            if self.token and self.spent:  # spent meanwhile by a parallel attempt
                return False
            self.spent = self.spent or self.token
        return True

    def device_link_token(self, now: float) -> str:
        """A new token that signs one more device in, once, within :data:`DEVICE_LINK_SECONDS`."""
        token = new_token()
        with self.lock:
            self.device_links[hashlib.sha256(token.encode("utf-8")).digest()] = (
                now + DEVICE_LINK_SECONDS)
        return token


_ENVIRONMENT_KEYS = (SECRET_ENV, SECRET_KIND_ENV, SIGN_IN_SECONDS_ENV)
_SERVER_ACCESS: dict[tuple[str | None, ...], ServerAccess] = {}
_SERVER_ACCESS_LOCK = threading.Lock()


def server_access() -> ServerAccess:
    """This process's :class:`ServerAccess`, made from the environment on first use (the server
    and the pages of one dashboard process share it; made again if the environment's access
    settings change, as between tests). Raises ValueError when they are damaged."""
    key = tuple(os.environ.get(name) for name in _ENVIRONMENT_KEYS)
    with _SERVER_ACCESS_LOCK:
        found = _SERVER_ACCESS.get(key)
        if found is None:
            found = ServerAccess.from_environment()
            _SERVER_ACCESS.clear()
            _SERVER_ACCESS[key] = found
        return found
