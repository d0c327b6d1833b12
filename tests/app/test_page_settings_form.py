"""Method forms are generated from the methods' `Settings` fields: one source for every setting.

A field added to a Settings class appears on the page (with its bounds, default and help), is accepted by
`xcore run --set` and reaches the run's report; widget ranges equal the Settings limits; the DRM form shows
the number of folds that runs.
"""

from __future__ import annotations

import dataclasses
import json

import pytest
from pagetest import captions, click, page
from pydantic import Field

from xcore.cli import main as cli_main
from xcore.data.samples import load_sample
from xcore.esms.settings import ESMSSettings
from xcore.methods import REGISTRY
from xcore.report import report_html

pytestmark = pytest.mark.xdist_group("app")


def number_widgets(at) -> dict[str, tuple[float | None, float | None, object]]:
    """key -> (min, max, value) of every number input and slider on the page."""
    out = {}
    for w in at.number_input:
        out[w.key] = (w.proto.min if w.proto.has_min else None, w.proto.max if w.proto.has_max else None, w.value)
    for w in at.slider:
        out[w.key] = (w.proto.min, w.proto.max, w.value)
    return out


def limits(settings_type, name: str) -> tuple[float | None, float | None]:
    info = settings_type.model_fields[name]
    ge = next((m.ge for m in info.metadata if hasattr(m, "ge")), None)
    le = next((m.le for m in info.metadata if hasattr(m, "le")), None)
    return ge, le


@pytest.mark.parametrize("name, sample", [("esms", "lastfm_demo"), ("nlil", "trains_michalski10"),
                                          ("plkb", "titanic_like"), ("drm", "trains_michalski10"),
                                          ("mln", "reviews_demo")])
def test_widget_ranges_equal_the_settings_limits(name, sample):
    method = name
    settings_type = REGISTRY[method].settings_type
    at = page(name, load_sample(sample))
    widgets = number_widgets(at)
    checked = 0
    for key, (low, high, _) in widgets.items():
        field = key[len(method) + 1:]
        if not key.startswith(method + "_") or field not in settings_type.model_fields:
            continue  # a generator's own widget (scenes, trains), not a setting
        ge, le = limits(settings_type, field)
        assert (low, high) == (ge, le), f"{key}: widget {low}..{high}, settings {ge}..{le}"
        checked += 1
    assert checked >= 4
    if method == "esms":
        assert widgets["esms_rules_per_model"][:2] == (1, 200) and widgets["esms_iterations"][:2] == (1, 100_000)
    if method == "nlil":
        assert widgets["nlil_clusters"][:2] == (1, 10)


def test_the_drm_form_shows_the_folds_that_run():
    at = page("drm", load_sample("trains_michalski10"))  # five trains per class: at most 5 folds
    assert at.number_input(key="drm_folds").value == 5
    at.number_input(key="drm_folds").set_value(10).run()
    assert any("5 DRMs, one per fold, each predicts the examples of its fold (the smallest class has 5 examples)"
               in c for c in captions(at))


@pytest.mark.slow
def test_the_drm_hidden_layers_are_drawn_parsed_validated_and_run():
    """DRM's nested `hidden` (architectures of layer sizes) as text: `16; 32, 16` runs two architectures; a
    bad entry is an error naming the field and nothing runs."""
    at = page("drm", load_sample("trains_michalski10"))
    box = at.text_input(key="drm_hidden")
    assert box.value == "32" and "';'" in box.help and box.label.startswith("Hidden layers")
    for value, problem in (("16; x", "valid integer"), ("16; 0", "positive layer sizes"), (" ; ", "at least one")):
        box.set_value(value).run()
        shown = [e.value for e in at.error]
        assert any("Hidden layers" in e and problem in e for e in shown), (value, shown)
        assert at.button(key="drm_train").disabled  # no settings, no run
    for key, value in (("drm_max_draws", 400), ("drm_folds", 2), ("drm_max_epochs", 20)):
        at.number_input(key=key).set_value(value)
    at.text_input(key="drm_hidden").set_value("16;32, 16 ;").run()
    assert not at.error, [e.value for e in at.error]
    click(at, "drm_train")
    run = list(at.session_state["_runs"].values())[-1]
    assert run.settings.hidden == ((16,), (32, 16))
    assert at.text_input(key="drm_hidden").value == "16;32, 16 ;"  # as typed; the run has the parsed value
    nets = [d.value for d in at.dataframe if "hidden" in d.value.columns][0]
    # ten trains: one DRM per fold (2), each fit chose one of the two architectures its inner validation tried
    assert nets["fold"].tolist() == [1, 2] and set(nets["hidden"]) <= {"(16,)", "(32, 16)"}


class KnobSettings(ESMSSettings):
    """ESMS settings with one more field, as a developer would add it."""

    extra_knob: int = Field(3, ge=1, le=7, title="Extra knob", description="A setting added by one line.")


@pytest.fixture
def knob_method(monkeypatch):
    """The registry's ESMS with `KnobSettings` (its defaults for the data, plus the new field's)."""
    spec = REGISTRY["esms"]
    knob = dataclasses.replace(spec, settings_type=KnobSettings,
                               default_settings=lambda ds: KnobSettings(**spec.default_settings(ds).to_dict()))
    REGISTRY["esms"]  # loaded, so the patched entry is what every lookup returns
    monkeypatch.setitem(REGISTRY._loaded, "esms", knob)
    return knob


def test_a_new_settings_field_appears_on_the_page_and_reaches_the_run(knob_method):
    at = page("esms", load_sample("lastfm_demo"))
    knob = at.number_input(key="esms_extra_knob")
    assert (knob.label, knob.value, knob.proto.min, knob.proto.max) == ("Extra knob", 3, 1, 7)
    assert knob.help == "A setting added by one line."
    knob.set_value(5)
    at.number_input(key="esms_iterations").set_value(2)
    at.run()
    click(at, "esms_run_btn")
    run = list(at.session_state["_runs"].values())[-1]
    assert isinstance(run.settings, KnobSettings) and run.settings.extra_knob == 5
    assert "extra_knob" in report_html(run)


def test_a_new_settings_field_is_accepted_by_xcore_run_set(knob_method, tmp_path, capsys):
    out = tmp_path / "run"
    code = cli_main(["run", "esms", "sample:lastfm_demo", "--set", "extra_knob=6", "--set", "iterations=2",
                     "--out", str(out)])
    assert code == 0
    assert json.loads((out / "run.json").read_text())["settings"]["extra_knob"] == 6
    assert "extra_knob" in (out / "report.html").read_text()
    assert cli_main(["run", "esms", "sample:lastfm_demo", "--set", "extra_knob=9", "--out", str(out)]) == 2
    assert "extra_knob" in capsys.readouterr().err


def test_pages_are_views_that_draw_no_stray_text():
    """Streamlit writes any bare string of a page's module body onto the page ("magic"): only the module
    docstring may stand alone."""
    import ast
    from pathlib import Path

    for path in sorted((Path(__file__).resolve().parents[2] / "app_pages").glob("*.py")):
        body = ast.parse(path.read_text()).body
        stray = [n.lineno for n in body[1:] if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)]
        assert not stray, f"{path.name}: bare strings at lines {stray} would be drawn on the page"


def test_a_kept_value_on_an_exclusive_limit_falls_back_to_the_default():
    """A browser run once showed "Test share: Input should be greater than 0 (got 0.0)" under load: a
    number widget drawn without its state shows its minimum, and 0.0 (the `gt` limit) was then kept as if
    valid. A kept value the Settings refuse is replaced by the default before drawing, and the run starts."""
    at = page("esms", load_sample("lastfm_demo"))
    default = at.number_input(key="esms_test_fraction").value
    assert default == ESMSSettings.model_fields["test_fraction"].default
    for _ in range(2):
        at.session_state["esms_test_fraction"] = 0.0
        at.run()
        assert at.number_input(key="esms_test_fraction").value == default
        assert not [e.value for e in at.error if "Test share" in e.value]
