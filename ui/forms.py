"""Settings forms generated from a method's `Settings` pydantic fields: one source for every setting.

Each field gives its widget: the default (the method's `default_settings(data)`, so the form shows the
value that runs), bounds (`ge`/`le` become the widget's limits), `Literal` choices, `title` as the label
and `description` as the help. A page only says how to lay the fields out (`FormLayout`): which rows
and columns, which widget kind where the type allows two (slider or number, radio or select box),
choices that come from the data, and which fields are edited elsewhere. A field the layout does not
name appears under *More settings*, so a new field reaches the page by being declared.

Values are kept per browser session and method (`ui.state`): leaving the page and coming back, or a
rerun, keeps them; when the data (or a field a default depends on, such as the target) changes, a field
the user left at its default follows the new default, and a value the new data cannot take is reset.
"""

from __future__ import annotations

import math
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import annotated_types as at
import streamlit as st
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from ui.common import guarded
from ui.state import form_store, keep, put
from xcore.data import RelationalDataset
from xcore.errors import ConfigError
from xcore.methods import MethodSpec, Settings

NONE = "(none)"
"""How None is shown among a field's choices (an optional field: leave it unset)."""

Values = Mapping[str, Any]
Rows = tuple[tuple[str, ...], ...]
Choices = Callable[[RelationalDataset, Values], list]


@dataclass(frozen=True)
class FormLayout:
    """Per-method layout hints: everything else comes from the `Settings` fields.

    - `rows`: the fields shown first, one tuple per row, each field in a column of that row.
    - `advanced`: rows shown in the *More settings* expander (any field not named anywhere joins them).
    - `hidden`: fields the form does not draw (edited elsewhere on the page, or not for people); they
      keep the default for the data.
    - `widgets`: field -> "slider", "radio", "text_area", "toggle" where the type allows another widget.
    - `steps`: field -> the step of a number input or slider.
    - `choices`: field -> f(data, values so far) listing the values the data allows (targets, columns);
      None among them is shown as "(none)" (an optional field left unset).
    - `labels`: field -> f(value) -> text shown for a choice (`format_func`).
    - `follow`: f(data, values of the `follow_on` fields) -> {field: default}: defaults that depend on
      the data and on other fields (the target decides ESMS's weight learning); fields the user left at
      their default follow them.
    - `show_if` / `disable_if`: field -> f(values) -> bool.
    - `notes`: field -> f(data, values) -> a caption under the field (what really runs), or None.
    - `titles`: field -> its label where the field declares no `title` (declaring one is better).
    """

    rows: tuple[tuple[str, ...], ...] = ()
    advanced: tuple[tuple[str, ...], ...] = ()
    hidden: tuple[str, ...] = ()
    widgets: Mapping[str, str] = field(default_factory=dict)
    steps: Mapping[str, float] = field(default_factory=dict)
    choices: Mapping[str, Choices] = field(default_factory=dict)
    labels: Mapping[str, Callable[[Any], str]] = field(default_factory=dict)
    follow: Callable[[RelationalDataset, Values], dict] | None = None
    follow_on: tuple[str, ...] = ()
    show_if: Mapping[str, Callable[[Values], bool]] = field(default_factory=dict)
    disable_if: Mapping[str, Callable[[Values], bool]] = field(default_factory=dict)
    notes: Mapping[str, Callable[[RelationalDataset, Values], str | None]] = field(default_factory=dict)
    titles: Mapping[str, str] = field(default_factory=dict)
    advanced_title: str = "More settings"

    def named(self) -> set[str]:
        return {f for row in (*self.rows, *self.advanced) for f in row} | set(self.hidden)

    def all_rows(self, settings_type: type[Settings]) -> tuple[Rows, Rows]:
        """(basic rows, advanced rows): the advanced ones end with every field the layout does not name."""
        fields = settings_type.model_fields
        rest = [name for name in fields if name not in self.named()]
        extra = tuple(tuple(rest[i:i + 4]) for i in range(0, len(rest), 4))
        keep_known = lambda rows: tuple(tuple(f for f in row if f in fields) for row in rows)  # noqa: E731
        return keep_known(self.rows), keep_known(self.advanced) + extra


# ---------------------------------------------------------------------- what a field says about itself
def widget_key(method: str, name: str) -> str:
    """The widget key of a setting: ``<method>_<field>`` (tests and the browser address widgets by it)."""
    return f"{method}_{name}"


def bounds(info: FieldInfo) -> tuple[float | None, float | None]:
    """Inclusive (low, high) limits of a numeric field (`ge`/`le`; exclusive `gt`/`lt` are left to the
    validation, which names the field)."""
    low = high = None
    for m in info.metadata:
        if isinstance(m, at.Ge):
            low = m.ge
        elif isinstance(m, at.Le):
            high = m.le
    return low, high


def open_bounds(info: FieldInfo) -> tuple[float | None, float | None]:
    """Exclusive (gt, lt) limits of a numeric field: a kept value on such a limit cannot be shown."""
    above = next((m.gt for m in info.metadata if isinstance(m, at.Gt)), None)
    below = next((m.lt for m in info.metadata if isinstance(m, at.Lt)), None)
    return above, below


def max_length(info: FieldInfo) -> int | None:
    return next((m.max_length for m in info.metadata if isinstance(m, at.MaxLen)), None)


def base_type(annotation: Any) -> tuple[Any, bool]:
    """(the type without `| None`, whether None is allowed)."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return (args[0] if len(args) == 1 else annotation), len(args) < len(typing.get_args(annotation))
    return annotation, False


def literal_choices(annotation: Any) -> list | None:
    kind, _ = base_type(annotation)
    return list(typing.get_args(kind)) if typing.get_origin(kind) is typing.Literal else None


def is_str_tuple(kind: Any) -> bool:
    return typing.get_origin(kind) is tuple and typing.get_args(kind)[:1] == (str,)


def is_flat_number_tuple(kind: Any) -> bool:
    args = typing.get_args(kind)
    return typing.get_origin(kind) is tuple and args[:1] in ((int,), (float,))


def is_nested_number_tuple(kind: Any) -> bool:
    """A tuple of number tuples (DRM's `hidden`: the layer sizes of each architecture tried)."""
    args = typing.get_args(kind)
    return typing.get_origin(kind) is tuple and len(args) >= 1 and is_flat_number_tuple(args[0])


NESTED_HELP = "Groups separated by ';', numbers within a group by ',' (e.g. `16; 32, 16`: two groups)."
"""Help of a tuple-of-tuples field, after the field's own description."""


def label_of(name: str, info: FieldInfo, layout: FormLayout | None = None) -> str:
    """The field's title, else the layout's, else its name in words."""
    return info.title or (layout.titles.get(name) if layout else None) or name.replace("_", " ").capitalize()


def drawable(info: FieldInfo) -> bool:
    """Whether the form can draw a widget for this field's type."""
    kind, _ = base_type(info.annotation)
    return (kind in (bool, int, float, str) or literal_choices(info.annotation) is not None or is_str_tuple(kind)
            or is_flat_number_tuple(kind) or is_nested_number_tuple(kind))


# ---------------------------------------------------------------------- the form
def _valid(raw: Any, info: FieldInfo, options: list | None) -> bool:
    """Whether a widget's kept value can still be shown: among the options the data allows (None: no
    choice made yet, for an optional field), within the bounds."""
    kind, optional = base_type(info.annotation)
    if options is not None:
        if is_str_tuple(kind):
            return isinstance(raw, list) and all(v in options for v in raw)
        return raw in options or (raw is None and optional)
    if raw is None:
        return optional
    if kind in (int, float):
        if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw):
            return False
        low, high = bounds(info)
        above, below = open_bounds(info)
        return ((low is None or raw >= low) and (high is None or raw <= high)
                and (above is None or raw > above) and (below is None or raw < below))
    return True


def _to_widget(value: Any, info: FieldInfo, options: list | None = None) -> Any:
    """A settings value as its widget holds it (None among choices is the "(none)" choice)."""
    kind, _ = base_type(info.annotation)
    if value is None and options is not None and NONE in options:
        return NONE
    if is_str_tuple(kind):
        return list(value or [])
    if is_flat_number_tuple(kind):
        return ", ".join(str(v) for v in value or ())
    if is_nested_number_tuple(kind):
        return "; ".join(", ".join(str(v) for v in group) for group in value or ())
    if kind is float and value is not None:
        return float(value)
    return value


def _from_widget(value: Any, info: FieldInfo) -> Any:
    """A widget's value as the settings take it (pydantic validates and converts the rest)."""
    kind, _ = base_type(info.annotation)
    if value == NONE:
        return None
    if is_str_tuple(kind):
        return tuple(value or ())
    if is_flat_number_tuple(kind):
        return tuple(v.strip() for v in str(value).split(",") if v.strip())
    if is_nested_number_tuple(kind):  # "16; 32, 16" -> (("16",), ("32", "16")): the Settings convert and check
        groups = (tuple(v.strip() for v in g.split(",") if v.strip()) for g in str(value).split(";"))
        return tuple(g for g in groups if g)
    return value


def _options(name: str, info: FieldInfo, layout: FormLayout, data: RelationalDataset, values: Values) -> list | None:
    """The choices of a field: the data's (layout) or its `Literal`'s; None for free values."""
    if name in layout.choices:
        return [NONE if v is None else v for v in layout.choices[name](data, values)]
    return literal_choices(info.annotation)


def draw(container: Any, method: str, name: str, info: FieldInfo, layout: FormLayout, options: list | None,
         values: Values) -> Any:
    """One widget for one field, its state already in session state (no default passed)."""
    key = widget_key(method, name)
    kind, optional = base_type(info.annotation)
    if key not in st.session_state:  # dropped since it was set: a widget without state shows its minimum
        st.session_state[key] = _to_widget(values.get(name), info, options)
    label, help_text = label_of(name, info, layout), info.description
    if is_nested_number_tuple(kind):
        help_text = f"{help_text or ''} {NESTED_HELP}".strip()
    disabled = bool(layout.disable_if.get(name, lambda v: False)(values))
    how = layout.widgets.get(name)
    show = layout.labels.get(name)
    fmt = (lambda v: str(v if show(v) is None else show(v))) if show else str
    common = dict(key=key, help=help_text, disabled=disabled)
    if options is not None and is_str_tuple(kind):
        return container.multiselect(label, options, format_func=fmt, **common)
    if options is not None:
        if how == "radio":
            return container.radio(label, options, format_func=fmt, horizontal=True, **common)
        return container.selectbox(label, options, format_func=fmt, placeholder="choose one", **common)
    if kind is bool:
        return (container.toggle if how == "toggle" else container.checkbox)(label, **common)
    if kind in (int, float):
        low, high = bounds(info)
        step = layout.steps.get(name, 1 if kind is int else None)
        if kind is float:
            low, high = (None if low is None else float(low)), (None if high is None else float(high))
            step = None if step is None else float(step)
        if how == "slider" and low is not None and high is not None:
            return container.slider(label, low, high, step=step, **common)
        return container.number_input(label, min_value=low, max_value=high, step=step, **common)
    if how == "text_area":
        return container.text_area(label, max_chars=max_length(info), **common)
    return container.text_input(label, max_chars=max_length(info), **common)


def settings_form(spec: MethodSpec, data: RelationalDataset, layout: FormLayout,
                  fixed: Mapping[str, Any] | None = None) -> Settings | None:
    """Draw the form of the method's `Settings` for `data` and return the validated settings (None, with
    the reason shown in words, when they are not valid); `fixed` sets fields the page decides itself."""
    fields = spec.settings_type.model_fields
    store = form_store(spec.key)
    base = _base_values(spec, data, store)
    basic, advanced = layout.all_rows(spec.settings_type)
    order = [f for rows in (basic, advanced) for row in rows for f in row]
    values = _values_before_drawing(spec.key, fields, base, order, store, layout, data)
    drawn: dict[str, Any] = {}
    _draw_rows(basic, st, spec.key, fields, layout, data, values, drawn)
    if any(f in fields and drawable(fields[f]) for row in advanced for f in row):
        with st.expander(layout.advanced_title):
            _draw_rows(advanced, st, spec.key, fields, layout, data, values, drawn)
    return _validated(spec.settings_type, fields, layout, {**values, **drawn, **(fixed or {})}, drawn)


def _base_values(spec: MethodSpec, data: RelationalDataset, store: dict[str, Any]) -> dict[str, Any]:
    """The method's defaults for `data` (computed once per dataset), with each field's own default for
    a field they leave out."""
    if store.get("data") is not data:  # datasets are never changed in place: identity says "same data"
        store["base"] = guarded(lambda: spec.default_settings(data).to_dict()) or {}
        store["data"], store["follow"] = data, {}
    base: dict[str, Any] = dict(store["base"])
    for name, info in spec.settings_type.model_fields.items():
        if name not in base and info.default is not PydanticUndefined:
            base[name] = info.get_default(call_default_factory=True)
    return base


def _values_before_drawing(method: str, fields: Mapping[str, Any], base: dict[str, Any], order: list[str],
                           store: dict[str, Any], layout: FormLayout, data: RelationalDataset) -> dict[str, Any]:
    """The values before drawing: kept ones, reset where the data cannot take them, following defaults."""
    drivers = [f for f in layout.follow_on if f in fields]
    values: dict[str, Any] = {}
    previous: dict[str, Any] = store.setdefault("defaults", {})
    current: dict[str, Any] = {}
    followed: dict[str, Any] = {}
    for name in drivers + [f for f in fields if f not in drivers]:
        if layout.follow is not None and name not in drivers and not followed and drivers:
            followed = follow(store, layout, data, {d: values[d] for d in drivers})
        elif layout.follow is not None and not drivers and not followed:
            followed = follow(store, layout, data, {})
        info = fields[name]
        wanted = followed.get(name, base.get(name))
        current[name] = wanted
        if name in layout.hidden or name not in order or not drawable(info):
            values[name] = wanted
            continue
        options = _options(name, info, layout, data, values)
        key = widget_key(method, name)
        shown = _to_widget(wanted, info, options)
        keep(key, shown)  # restores a value kept across navigation, else the default
        if not _valid(st.session_state[key], info, options):
            put(key, shown)  # the data cannot take it (another dataset's target): its default here
        elif name in previous and st.session_state[key] == _to_widget(previous[name], info, options) != shown:
            put(key, shown)  # left at the old default: follow the new one
        values[name] = _from_widget(st.session_state[key], info)
    store["defaults"] = current
    return values


def _draw_rows(rows: tuple[tuple[str, ...], ...], where: Any, method: str, fields: Mapping[str, Any],
               layout: FormLayout, data: RelationalDataset, values: dict[str, Any], drawn: dict[str, Any]) -> None:
    """Draw the visible fields of `rows`, one row of columns each, updating `values` and `drawn`."""
    for row in rows:
        visible = [f for f in row if f in fields and drawable(fields[f])
                   and layout.show_if.get(f, lambda v: True)(values)]
        if not visible:
            continue
        cols = where.columns(len(visible)) if len(visible) > 1 else [where]
        for col, name in zip(cols, visible):
            info = fields[name]
            options = _options(name, info, layout, data, values)
            raw = draw(col, method, name, info, layout, options, values)
            drawn[name] = _from_widget(raw, info)
            keep(widget_key(method, name))
            values[name] = drawn[name]
            note = layout.notes.get(name)
            text = note(data, values) if note else None
            if text:
                col.caption(text)


def _validated(settings_type: type[Settings], fields: Mapping[str, Any], layout: FormLayout,
               chosen: dict[str, Any], drawn: dict[str, Any]) -> Settings | None:
    """The chosen values as validated settings, or None with what is missing or wrong shown on the page."""
    missing = [label_of(n, fields[n], layout) for n in fields if n in drawn and drawn[n] is None
               and not base_type(fields[n].annotation)[1]]
    if missing:
        st.info(f"Choose a value for: {', '.join(missing)}.")
        return None
    try:
        return settings_type.parse({k: v for k, v in chosen.items() if k in fields})
    except ConfigError as e:  # the field by its label on the page, then what the Settings said
        name = (e.field or "").split(".")[0]
        st.error(f"**{label_of(name, fields[name], layout)}**: {e}" if name in fields else str(e))
        return None


def set_form(spec: MethodSpec, settings: Settings) -> None:
    """Write settings into the method's form (a demo button), shown on its next pass as they are."""
    fields = spec.settings_type.model_fields
    for name, value in settings.to_dict().items():
        if name in fields and drawable(fields[name]):
            kind, _ = base_type(fields[name].annotation)
            put(widget_key(spec.key, name), NONE if value is None and not is_str_tuple(kind) else
                _to_widget(value, fields[name]))
    form_store(spec.key).pop("defaults", None)  # nothing to follow on that pass: these are the values


def follow(store: dict, layout: FormLayout, data: RelationalDataset, drivers: dict[str, Any]) -> dict[str, Any]:
    """The layout's data-dependent defaults for these driver values (computed once per data and values)."""
    memo = store.setdefault("follow", {})
    key = repr(sorted(drivers.items()))
    if key not in memo:
        memo[key] = guarded(layout.follow, data, drivers) or {}
    return memo[key]


def shown_fields(settings_type: type[Settings], layout: FormLayout) -> list[str]:
    """The fields the form draws (in order), for tests and documentation."""
    basic, advanced = layout.all_rows(settings_type)
    return [f for rows in (basic, advanced) for row in rows for f in row
            if f in settings_type.model_fields and drawable(settings_type.model_fields[f])]
