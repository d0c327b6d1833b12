"""The researcher key: read from the environment or the app's secrets, long enough, compared in constant
time, and guessed at most a few times (per browser session and per server) before a lockout."""

from __future__ import annotations

import hashlib
import hmac
import math
import os
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Callable
from urllib.parse import urlencode, urlsplit

from xcore.errors import ConfigError

KEY_ENV = "XCORE_RESEARCHER_KEY"
MIN_KEY_LENGTH = 16
"""Shortest researcher key accepted (e.g. four random words, or `python -c "import secrets;
print(secrets.token_urlsafe(18))"`)."""
SECRET_NAME = "researcher_key"
STUDY_PARAM, TOKEN_PARAM = "study", "p"
"""Query parameters of a participant link (`/?study=ID&p=TOKEN`)."""


def app_root(address: str) -> str:
    """The app's root address (scheme and host) from any page address: participant links open the root."""
    parts = urlsplit(address.strip() if "://" in address else f"http://{address.strip()}")
    return f"{parts.scheme}://{parts.netloc}"


def participant_links(address: str, study_id: str, tokens: list[str]) -> list[str]:
    """One link per participant token, on the root of the app at `address`."""
    root = app_root(address)
    return [f"{root}/?{urlencode({STUDY_PARAM: study_id, TOKEN_PARAM: t})}" for t in tokens]


def key_matches(given: str | None, expected: str | None) -> bool:
    """True when `given` equals the configured key; constant time (digests of equal length compared
    with `hmac.compare_digest`); an unset or empty key opens nothing."""
    if not expected or not given:
        return False
    a = hashlib.sha256(given.encode("utf-8")).digest()
    b = hashlib.sha256(expected.encode("utf-8")).digest()
    return hmac.compare_digest(a, b)


def configured_key(secrets: object = None) -> str | None:
    """The researcher key: `XCORE_RESEARCHER_KEY`, else `researcher_key` in the app's secrets, else None."""
    value = os.environ.get(KEY_ENV, "")
    if value:
        return value
    if secrets is not None:
        try:
            value = secrets.get(SECRET_NAME, "")  # type: ignore[attr-defined]
        except Exception:  # noqa: BLE001 - no secrets file is the usual case
            value = ""
    return str(value) or None


def check_key_strength(key: str) -> None:
    """Refuse a researcher key shorter than `MIN_KEY_LENGTH` (checked when the app starts and on the page)."""
    if len(key) < MIN_KEY_LENGTH:
        raise ConfigError(f"the researcher key is {len(key)} characters long; use at least {MIN_KEY_LENGTH} "
                          "(e.g. four random words)", field=KEY_ENV)


@dataclass
class KeyGuard:
    """Failed researcher-key attempts: each costs `delay_s`; `session_limit` failures in `window_s` lock that
    browser session, `server_limit` failures lock the researcher view of the whole server, until the
    window passes. While locked, no key (not even the right one) is checked."""

    session_limit: int = 5
    server_limit: int = 30
    window_s: float = 900.0
    delay_s: float = 1.0
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    _server: deque = field(default_factory=deque, repr=False)
    _sessions: dict = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def _prune(self, now: float) -> None:
        old = now - self.window_s
        while self._server and self._server[0] <= old:
            self._server.popleft()
        for sid in list(self._sessions):
            times = self._sessions[sid]
            while times and times[0] <= old:
                times.popleft()
            if not times:
                del self._sessions[sid]

    def locked(self, session_id: str) -> str | None:
        """Why `session_id` may not try a key now (None when it may)."""
        with self._lock:
            now = self.clock()
            self._prune(now)
            for times, limit, who in ((self._server, self.server_limit, "on this server"),
                                      (self._sessions.get(session_id, ()), self.session_limit, "in this session")):
                if len(times) >= limit:
                    wait = max(1, math.ceil((times[-limit] + self.window_s - now) / 60))
                    return (f"Too many wrong researcher keys {who}: the researcher view is locked for about "
                            f"{wait} more minute{'s' if wait != 1 else ''}.")
        return None

    def attempt(self, session_id: str, given: str | None, expected: str | None) -> tuple[bool, str]:
        """(opened, message): checks `given` unless locked; a failure is recorded and slowed down."""
        why = self.locked(session_id)
        if why:
            return False, why
        if key_matches(given, expected):
            with self._lock:
                self._sessions.pop(session_id, None)
            return True, ""
        with self._lock:
            now = self.clock()
            self._server.append(now)
            self._sessions.setdefault(session_id, deque()).append(now)
        self.sleep(self.delay_s)
        return False, self.locked(session_id) or "That researcher key is not right."


GUARD = KeyGuard()
"""The server's guard (one per process: every browser session of this server shares it)."""
