"""Arguments of the commands, checked before any heavy import: `--set` pairs, the settings file, the
settings built from them, numeric flags and run bundle paths (errors are `ConfigError`/`DataError`s
naming the flag, file or line)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from xcore.errors import ConfigError, DataError
from xcore.methods.catalog import is_optional_field, is_tuple_field
from xcore.optional_deps import import_optional

NONE_WORDS = {"", "none", "null", "~"}


def parse_set(pairs: Sequence[str], settings_type: type) -> dict[str, Any]:
    """`key=value` strings as a mapping for `settings_type.parse`: values stay strings (pydantic coerces
    them), comma lists become tuples for tuple fields, and none/null become None for optional fields."""
    fields = settings_type.model_fields
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ConfigError(f"--set needs key=value, got {pair!r}", field=key or "--set")
        field = fields.get(key)
        if field is not None and is_optional_field(field.annotation) and value.strip().lower() in NONE_WORDS:
            out[key] = None
        elif field is not None and is_tuple_field(field.annotation):
            out[key] = tuple(v.strip() for v in value.split(",") if v.strip())
        else:
            out[key] = value
    return out


def read_config(path: str) -> dict[str, Any]:
    """A YAML mapping of settings (yaml.safe_load); problems are `DataError`s naming file and line."""
    yaml = import_optional("yaml")  # about 0.1 s: only with a settings file, so --help and argument errors stay light

    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise DataError(f"cannot read the settings file: {e.strerror or e}", file=str(p)) from None
    except UnicodeDecodeError as e:
        raise DataError(f"the settings file is not UTF-8 text: {e.reason}", file=str(p)) from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise DataError(f"invalid YAML: {problem}", file=str(p),
                        line=None if mark is None else mark.line + 1) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise DataError(f"the settings file must be a mapping of setting names to values, got {type(data).__name__}",
                        file=str(p))
    return {str(k): v for k, v in data.items()}


def build_settings(spec: Any, dataset: Any, config: dict[str, Any], sets: dict[str, Any],
                   config_name: str = "") -> Any:
    """The method's defaults for `dataset`, then the YAML file, then --set flags, validated by its Settings."""
    base = spec.default_settings(dataset).to_dict()
    try:
        return spec.settings_type.parse({**base, **config, **sets})
    except ConfigError as e:
        if config_name and e.field in config and e.field not in sets:
            raise ConfigError(f"{e.problem} (in {config_name})", field=e.field) from None
        raise


def at_least(value: int, low: int, flag: str) -> int:
    """`value`, or a `ConfigError` naming the flag when it is below `low`."""
    if value < low:
        raise ConfigError(f"must be at least {low}, got {value}", field=flag)
    return value


def bundle_path(path: str) -> str:
    """A run bundle file given as itself or as the folder `xcore run` wrote (its run.json)."""
    p = Path(path)
    return str(p / "run.json") if p.is_dir() else path
