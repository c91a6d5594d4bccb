"""API keys: held as SHA-256 digests, compared in constant time, revocable without a restart.

Keys come from GA_API_KEYS (plain, convenient for development), GA_API_KEY_HASHES (digests) and
GA_API_KEYS_FILE (one `sha256:<hex> [name]` per line, `#` comments; re-read when it changes, so
deleting a line revokes that key within a second). Only digests are kept in memory. A caller is
identified by a short fingerprint of its key's digest: traces, stored responses and quotas belong
to that fingerprint, never to anything the client chooses.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import time
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

from app.errors import GroundingError
from app.settings import Settings

log = logging.getLogger(__name__)

ANONYMOUS = "anonymous"  # the caller when auth is disabled
RELOAD_CHECK_S = 1.0  # how often the keys file's mtime is looked at (revocation latency)
# The caller of the request being served (set by auth); reachable where the caller is not passed.
caller_var: ContextVar[str] = ContextVar("caller", default=ANONYMOUS)


class AuthMisconfigured(GroundingError):
    code = "auth_misconfigured"


def digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def fingerprint(key_digest: str) -> str:
    """What logs, traces and quotas name a key by: not the key, not enough to look it up."""
    return "key_" + key_digest[:16]


@dataclass(frozen=True, slots=True)
class Caller:
    id: str  # fingerprint, or ANONYMOUS when auth is disabled
    name: str = ""


def _parse_digest(value: str) -> str | None:
    value = value.strip().lower().removeprefix("sha256:")
    if len(value) == 64 and all(c in "0123456789abcdef" for c in value):
        return value
    return None


class KeyRing:
    def __init__(self, settings: Settings):
        self.disabled = settings.auth == "disabled"
        self._static: dict[str, str] = {digest(k): "" for k in settings.api_keys}
        for raw in settings.api_key_hashes:
            d = _parse_digest(raw)
            if d is None:
                raise AuthMisconfigured("GA_API_KEY_HASHES holds a value that is not a SHA-256 hex digest")
            self._static[d] = ""
        self._file = settings.api_keys_file
        self._file_keys: dict[str, str] = {}
        self._mtime: float | None = None
        self._checked = 0.0
        self._reload(force=True)
        if self.disabled:
            log.warning(
                "AUTH DISABLED (GA_AUTH=disabled): anyone who can reach this service can use it and spend "
                "its upstream budget; keys, if configured, are ignored"
            )
        elif not self._all():
            raise AuthMisconfigured(
                "no API keys configured: set GA_API_KEYS, GA_API_KEY_HASHES or GA_API_KEYS_FILE, "
                "or GA_AUTH=disabled explicitly for a private trial"
            )

    def _all(self) -> dict[str, str]:
        return {**self._static, **self._file_keys}

    def _reload(self, *, force: bool = False) -> None:
        if self._file is None:
            return
        now = time.monotonic()
        if not force and now - self._checked < RELOAD_CHECK_S:
            return
        self._checked = now
        try:
            mtime = os.stat(self._file).st_mtime
        except OSError:
            if force:
                raise AuthMisconfigured(f"GA_API_KEYS_FILE {self._file} cannot be read") from None
            log.error("keys file %s vanished: every key it held is revoked", self._file)
            self._file_keys, self._mtime = {}, None
            return
        if mtime == self._mtime:
            return
        self._file_keys = _read_keys_file(self._file)
        self._mtime = mtime
        log.info("keys file loaded: %d keys", len(self._file_keys))

    def verify(self, token: str) -> Caller | None:
        """The caller a presented key belongs to, or None. Every stored digest is compared (in
        constant time), so the time taken does not depend on which key matched or how far."""
        if self.disabled:
            return Caller(ANONYMOUS)
        self._reload()
        presented = digest(token)
        found: str | None = None
        name = ""
        for stored, key_name in self._all().items():
            if hmac.compare_digest(presented, stored):
                found, name = stored, key_name
        return Caller(fingerprint(found), name) if found else None


def _read_keys_file(path: Path) -> dict[str, str]:
    keys: dict[str, str] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        value, _, name = line.partition(" ")
        d = _parse_digest(value)
        if d is None:
            log.error("keys file line %d is not `sha256:<64 hex> [name]`: skipped", n)
            continue
        keys[d] = name.strip()
    return keys


def bearer_token(header: str) -> str:
    """The credentials of an `Authorization: Bearer <key>` header. The scheme is matched without
    regard to case (RFC 9110 §11.1: auth schemes are case-insensitive): Bearer, bearer, BEARER."""
    scheme, _, token = header.strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""
