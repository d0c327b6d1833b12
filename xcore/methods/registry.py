"""The registry of methods: key -> `MethodSpec`, each imported from its package on first use.

A new method is one package plus one line in `_ENTRIES` (then `python -m xcore.methods.catalog`
refreshes the light metadata the command line lists). Nothing here imports a method package at
import time, so `import xcore.methods` stays light (no torch, no Streamlit) and has no cycles.
"""

from __future__ import annotations

import importlib
from typing import Any, Iterator, Mapping

from xcore.errors import ConfigError

_ENTRIES: dict[str, str] = {
    "esms": "xcore.esms.method:SPEC",
    "mln": "xcore.mln.method:SPEC",
    "plkb": "xcore.plkb.method:SPEC",
    "drm": "xcore.drm.method:SPEC",
    "nlil": "xcore.nlil.method:SPEC",
}
"""Registry key -> "module:attribute" of the method's `MethodSpec`, in navigation order."""


class Registry(Mapping[str, Any]):
    """Method key -> `MethodSpec`, importing each method's package on first access."""

    def __init__(self, entries: Mapping[str, str]) -> None:
        self._entries = dict(entries)
        self._loaded: dict[str, Any] = {}

    def __getitem__(self, key: str) -> Any:
        if key not in self._entries:
            raise ConfigError(f"unknown method {key!r}; registered: {', '.join(self._entries)}", field="method")
        if key not in self._loaded:
            module, attr = self._entries[key].split(":")
            self._loaded[key] = getattr(importlib.import_module(module), attr)
        return self._loaded[key]

    def __contains__(self, key: object) -> bool:
        """Whether `key` is registered (without importing its package; an unknown key is False, not an error)."""
        return key in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)


REGISTRY = Registry(_ENTRIES)
"""Every registered method (`xcore.methods.base.MethodSpec` values), in navigation order."""
