"""The researcher key: read from the environment or the app's secrets, compared in constant time."""

from __future__ import annotations

import hashlib
import hmac
import os
from urllib.parse import urlencode, urlsplit

KEY_ENV = "XCORE_RESEARCHER_KEY"
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
