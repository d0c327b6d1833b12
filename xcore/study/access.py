"""The researcher key: read from the environment or the app's secrets, compared in constant time."""

from __future__ import annotations

import hashlib
import hmac
import os

KEY_ENV = "XCORE_RESEARCHER_KEY"
SECRET_NAME = "researcher_key"


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
