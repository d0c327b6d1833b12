"""`Settings`: the frozen, hashable, validated settings every method declares (pydantic v2); a bad value
raises `ConfigError` naming the field."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any, ClassVar, Mapping

from pydantic import BaseModel, ConfigDict, ValidationError

from xcore.errors import ConfigError
from xcore.explain.types import json_safe
from xcore.methods.registry import REGISTRY

if TYPE_CHECKING:
    from xcore.methods.estimator import Estimator


def _field_of(error: Mapping[str, Any]) -> str:
    """The dotted field name of one pydantic error entry."""
    return ".".join(str(p) for p in error.get("loc", ())) or "settings"


def config_error(exc: ValidationError, owner: str) -> ConfigError:
    """A `ConfigError` naming the first bad field of a pydantic `ValidationError` and what is wrong."""
    first = exc.errors()[0]
    name = _field_of(first)
    value = first.get("input")
    shown = "" if isinstance(value, Mapping) else f" (got {value!r})"
    return ConfigError(f"{first.get('msg', 'invalid value')}{shown} [{owner}]", field=name)


class Settings(BaseModel):
    """Frozen, hashable, validated settings of one method run; subclasses declare the fields.

    Unknown fields, NaN/inf and out-of-range values raise `ConfigError` naming the field.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False, validate_default=True,
                              use_attribute_docstrings=True)
    """`use_attribute_docstrings`: a field's docstring is its description (the form's help, `--help`)."""

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as e:
            raise config_error(e, type(self).__name__) from None

    @classmethod
    def parse(cls, data: Mapping[str, Any] | None = None, **changes: Any) -> "Settings":
        """Settings from a mapping (YAML, flags, a bundle), validated; `changes` override it."""
        if data is not None and not isinstance(data, Mapping):
            raise ConfigError(f"settings must be a mapping of field names to values, got {type(data).__name__}")
        return cls(**{**dict(data or {}), **changes})

    def replace(self, **changes: Any) -> "Settings":
        """A validated copy with some fields changed (pydantic's model_copy does not validate)."""
        return type(self).parse(self.model_dump(), **changes)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data of every field (tuples become lists)."""
        return json_safe(self.model_dump(mode="json"), "settings")

    def key(self) -> str:
        """A stable content hash of the settings (same settings, same key, in any process)."""
        text = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(f"{type(self).__name__}|{text}".encode()).hexdigest()[:24]

    method_key: ClassVar[str] = ""
    """The registry key of the method these settings belong to."""

    explainer_fields: ClassVar[frozenset[str]] = frozenset()
    """Fields that only change how a fitted model is explained (not the model): `model_key` leaves
    them out, so changing one re-explains a cached model instead of refitting it."""

    def model_key(self) -> str:
        """A stable content hash of the fields that decide the fitted model (every field but the
        explainers' ones)."""
        data = {k: v for k, v in self.to_dict().items() if k not in self.explainer_fields}
        text = json.dumps(data, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(f"{type(self).__name__}|model|{text}".encode()).hexdigest()[:24]

    def explainer_settings(self, fields: tuple[str, ...]) -> dict[str, Any]:
        """The values of some explainer fields (an explainer's own settings), as plain JSON data."""
        data = self.to_dict()
        return {f: data[f] for f in fields if f in data}

    def estimator(self) -> "Estimator":
        """The estimator these settings describe (the registered method's estimator type, unfitted)."""
        return REGISTRY[self.method_key].estimator_type(self)
