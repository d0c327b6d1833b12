"""Checks every explanation field and JSON text passes: JSON-safe values, typed fields, known keys,
a format tag and version, strict JSON (no NaN, no duplicate keys); failures are `ExplanationError`s."""

from __future__ import annotations

import json
import math
from typing import Any, Mapping

import numpy as np

from xcore.errors import XcoreError

FORMAT_VERSION = 3
READABLE_VERSIONS: tuple[int, ...] = (1, 2, 3)


class ExplanationError(XcoreError):
    """An explanation is malformed (bad field, non-finite score, invalid or tampered JSON)."""



def json_safe(value: Any, where: str = "value") -> Any:
    """Return `value` as plain JSON data (dict/list/str/int/float/bool/None), or raise.

    numpy scalars and arrays become Python numbers and lists, tuples become lists, so a value
    round-trips through JSON to an equal value. Non-finite floats and non-string keys are rejected.
    """
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return str(value)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        f = float(value)
        if not math.isfinite(f):
            raise ExplanationError(f"{where}: {f} is not a finite number (JSON cannot hold it)")
        return f
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return [json_safe(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise ExplanationError(f"{where}: key {k!r} is not a string")
            out[k] = json_safe(v, f"{where}[{k!r}]")
        return out
    raise ExplanationError(f"{where}: {type(value).__name__} is not JSON-safe")


def check_finite(value: Any, where: str, optional: bool = False) -> float | None:
    """`value` as a finite float (None passes when `optional`)."""
    if value is None and optional:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ExplanationError(f"{where} must be a number, got {type(value).__name__}")
    f = float(value)
    if not math.isfinite(f):
        raise ExplanationError(f"{where} must be finite, got {f}")
    return f


def check_string(value: Any, where: str) -> str:
    """`value` if it is a string."""
    if not isinstance(value, str):
        raise ExplanationError(f"{where} must be a string, got {type(value).__name__}")
    return value


def check_bool(value: Any, where: str) -> bool:
    """`value` as a bool if it is one (numpy bools too)."""
    if not isinstance(value, (bool, np.bool_)):
        raise ExplanationError(f"{where} must be true or false, got {type(value).__name__}")
    return bool(value)


def check_string_list(value: Any, where: str) -> list[str]:
    """`value` as a list of strings (a lone string is refused)."""
    if isinstance(value, str) or not isinstance(value, (list, tuple, np.ndarray)):
        raise ExplanationError(f"{where} must be a list of strings")
    return [check_string(v, f"{where}[{i}]") for i, v in enumerate(value)]




def check_keys(data: Any, where: str, required: tuple[str, ...], optional: tuple[str, ...],
                fmt: str | None = None) -> dict:
    """A copy of JSON object `data` after checking its format tag (if `fmt`) and its keys."""
    if not isinstance(data, dict):
        raise ExplanationError(f"{where} must be a JSON object, got {type(data).__name__}")
    if fmt is not None:
        check_format(data, fmt, where)
    missing = [k for k in required if k not in data]
    if missing:
        raise ExplanationError(f"{where} is missing {', '.join(repr(k) for k in missing)}")
    unknown = sorted(set(data) - set(required) - set(optional))
    if unknown:
        raise ExplanationError(f"{where} has unknown field(s) {', '.join(repr(k) for k in unknown)}")
    return dict(data)


def reject_constant(name: str) -> None:
    """`json.loads` hook: NaN and Infinity are refused."""
    raise ExplanationError(f"JSON contains {name}, which is not a finite number")


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """`json.loads` hook: an object with a repeated key is refused."""
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise ExplanationError(f"JSON object has the key {k!r} twice")
        out[k] = v
    return out


def loads_strict(text: Any, what: str) -> Any:
    """Parse JSON text strictly (no NaN/Infinity); errors name line and column."""
    if isinstance(text, (bytes, bytearray)):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ExplanationError(f"{what} JSON is not UTF-8: {e}") from None
    if not isinstance(text, str):
        raise ExplanationError(f"{what} JSON must be a string, got {type(text).__name__}")
    try:
        return json.loads(text, parse_constant=reject_constant, object_pairs_hook=unique_keys)
    except json.JSONDecodeError as e:
        raise ExplanationError(f"{what} JSON is malformed: line {e.lineno}, column {e.colno}: {e.msg}") from None
    except RecursionError:
        raise ExplanationError(f"{what} JSON is nested too deeply") from None


def check_format(data: dict, expected: str, where: str) -> None:
    """The format tag is `expected` and the version one this xcore reads."""
    fmt, version = data.get("format"), data.get("version")
    if fmt != expected:
        raise ExplanationError(f"{where}: format is {fmt!r}, expected {expected!r}")
    if version not in READABLE_VERSIONS or isinstance(version, bool):
        raise ExplanationError(f"{where}: unsupported format version {version!r} "
                               f"(this xcore reads {', '.join(map(str, READABLE_VERSIONS))})")


def check_k(k: Any, allow_zero: bool = False) -> int:
    """`k` as an int if it is a valid cutoff (>= 1, or >= 0 with `allow_zero`); the rule every metric@k shares."""
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
        raise ExplanationError(f"k must be an integer, got {k!r}")
    low = 0 if allow_zero else 1
    if k < low:
        raise ExplanationError(f"k must be at least {low}, got {k}")
    return int(k)

