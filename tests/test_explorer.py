"""The explorers' mechanism (``depthnotes/page/explorer.py``): every grid point precomputed,
the static HTML holding one frame per point and controls whose values are the grid's, and a
mime bundle that carries both the widget and the HTML."""

from __future__ import annotations

import json
from html.parser import HTMLParser

import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("matplotlib")

from depthnotes.page.explorer import Control, Explorer  # noqa: E402
from depthnotes.page import widgets  # noqa: E402


class _Parts(HTMLParser):
    """The controls, frames and scripts of an explorer's HTML."""

    def __init__(self):
        super().__init__()
        self.controls, self.frames, self.options, self.scripts = [], [], [], 0
        self._in_select = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "data-dn-control" in a:
            self.controls.append((tag, a))
            if tag == "select":
                self._in_select = []
                self.options.append(self._in_select)
        if tag == "option" and self._in_select is not None:
            self._in_select.append(a)
        if "data-dn-frame" in a:
            self.frames.append((tag, a))
        if tag == "script":
            self.scripts += 1

    def handle_endtag(self, tag):
        if tag == "select":
            self._in_select = None


def _parts(html: str) -> _Parts:
    p = _Parts()
    p.feed(html)
    return p


def _text_explorer():
    return Explorer("sum", [Control("a", "a", (1, 2, 3), 2),
                            Control("b", "b", ("x", "y"), "y", kind="select")],
                    lambda a, b: f"{a}-{b}")


def test_every_grid_point_is_one_frame_in_row_major_order():
    e = _text_explorer()
    assert [f.text for f in e.frames] == ["1-x", "1-y", "2-x", "2-y", "3-x", "3-y"]
    assert e.index(a=3, b="x") == 4 and e.frame(a=2, b="y").text == "2-y"
    p = _parts(e.to_html())
    assert len(p.frames) == 6
    visible = [i for i, (_, a) in enumerate(p.frames) if "hidden" not in a]
    assert visible == [e.index(a=2, b="y")], "only the starting frame shows without script"
    assert p.scripts == 1


def test_the_html_controls_offer_the_grid_values():
    p = _parts(_text_explorer().to_html())
    (t0, slider), (t1, select) = p.controls
    assert t0 == "input" and slider["type"] == "range"
    assert (slider["min"], slider["max"], slider["value"]) == ("0", "2", "1")
    assert json.loads(slider["data-labels"]) == ["1", "2", "3"] and slider["data-n"] == "3"
    assert t1 == "select" and json.loads(select["data-labels"]) == ["x", "y"]
    assert [o["value"] for o in p.options[0]] == ["0", "1"]
    assert "selected" in p.options[0][1]


def test_the_bundle_carries_the_widget_and_the_html():
    e = _text_explorer()
    bundle = e._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["text/html"] == e.to_html()
    w = e.widget()
    assert [c.description for c in w.kwargs_widgets] == ["a", "b"]
    assert list(w.kwargs_widgets[0].options) == [("1", 1), ("2", 2), ("3", 3)]


def test_the_html_is_stable_and_ids_differ_between_explorers():
    assert _text_explorer().to_html() == _text_explorer().to_html()
    other = Explorer("other", [Control("a", "a", (1, 2))], lambda a: str(a))
    assert other.element_id != _text_explorer().element_id


def test_bad_controls_are_refused():
    with pytest.raises(ValueError, match="not one of"):
        Control("a", "a", (1, 2), 3)
    with pytest.raises(ValueError, match="labels"):
        Control("a", "a", (1, 2), labels=("one",))
    with pytest.raises(ValueError, match="kind"):
        Control("a", "a", (1, 2), kind="knob")


def test_the_parameter_calculator_grid_matches_its_frames():
    e = widgets.param_explorer()
    n = 1
    for c in e.controls:
        n *= len(c.values)
    p = _parts(e.to_html())
    assert len(e.frames) == len(p.frames) == n
    assert [json.loads(a["data-labels"]) for _, a in p.controls] == \
        [list(c.labels) for c in e.controls]
    point = dict(n_layer=24, d_model=1024, ffn_mult=4, vocab_size=50257, tie_embeddings=False)
    assert e.frame(**point).text == widgets.format_breakdown(widgets.param_breakdown(
        24, 1024, ffn_mult=4, vocab_size=50257, tie_embeddings=False))
    assert len(e.to_html()) < 600_000


def test_a_figure_explorer_has_one_png_with_alt_text_per_point():
    import matplotlib.pyplot as plt

    from depthnotes.page.standard import COLUMN_PX

    def draw(slope):
        fig, ax = plt.subplots(figsize=(6, 2.5), dpi=100)
        ax.plot([0, 1], [0, slope])
        ax.set_title(f"slope {slope}")
        return fig

    e = Explorer("lines", [Control("slope", "slope", (1, 2, 3))], draw)
    p = _parts(e.to_html())
    assert [t for t, _ in p.frames] == ["img"] * 3
    assert [a["alt"] for _, a in p.frames] == ["slope 1", "slope 2", "slope 3"]
    assert all(a["src"].startswith("data:image/png;base64,") for _, a in p.frames)
    assert all(int(a["width"]) <= COLUMN_PX for _, a in p.frames)
    assert not plt.get_fignums(), "frames' figures are closed"


def _latency_explorer(measured=()):
    from depthnotes import ModelConfig

    base = ModelConfig(n_layer=1, d_model=512, n_head=8, vocab_size=256, context=64)
    return base, widgets.latency_explorer(base, bandwidth_gbs=16.0, dispatch_ms=0.4,
                                          fixed_ms=0.2, cache=8_000_000, measured=measured)


def test_the_latency_explorer_shows_the_model_and_keeps_the_measured_times_apart():
    from depthnotes.bench.latency import decode_weight_bytes, modelled_ms_per_token

    base = _latency_explorer()[0]
    measured = [(base.replace(n_layer=8), 10.87), (base.replace(n_layer=2), 2.93),
                (base.replace(n_layer=8, vocab_size=50257), 19.0)]
    _, e = _latency_explorer(measured)
    assert len(e.frames) == len(widgets.LATENCY_LAYERS) * len(widgets.LATENCY_WIDTHS)
    p = _parts(e.to_html())
    assert len(p.frames) == len(e.frames) and all(t == "pre" for t, _ in p.frames)
    text = e.frame(n_layer=8, d_model=512).text
    shape = widgets.latency_shape(base, 8, 512)
    model = modelled_ms_per_token(shape, 16.0, 0.4, 0.2)
    assert f"ms per token by the model: {model:.3g}" in text
    assert f"{decode_weight_bytes(shape) / 1e6:,.0f} MB from memory" in text
    # the measured times at this width, the other vocabulary's left out
    assert text.splitlines()[-1] == "  L = 2: 2.93, L = 8: 10.9"
    twice = _latency_explorer(measured + [(base.replace(n_layer=2), 3.1)])[1]
    assert twice.frame(n_layer=8, d_model=512).text.splitlines()[-1] == \
        "  L = 2: 2.93 and 3.1, L = 8: 10.9"
    other = e.frame(n_layer=8, d_model=256).text
    assert other.splitlines()[-1] == "no shape of width 256 was timed on this page"
    assert "cached weights" in e.frame(n_layer=1, d_model=64).text
    # every line fits the site's column
    assert max(len(line) for f in e.frames for line in f.text.splitlines()) <= 76


def test_the_latency_explorers_bars_share_out_the_modelled_time():
    base, _ = _latency_explorer()
    parts = widgets.latency_breakdown(widgets.latency_shape(base, 64, 1024),
                                      bandwidth_gbs=16.0, dispatch_ms=0.4, fixed_ms=0.2,
                                      cache=8_000_000)
    assert parts["model_ms"] == pytest.approx(
        parts["stream_ms"] + parts["dispatch_ms"] + parts["fixed_ms"])
    assert parts["regime"] == "memory" and parts["dispatch_ms"] == pytest.approx(64 * 0.4)
    text = widgets.format_latency(widgets.latency_shape(base, 64, 1024), parts,
                                  bandwidth_gbs=16.0, cache=8_000_000)
    bars = [line.count("\u2588") for line in text.splitlines() if "\u2588" in line]
    assert bars[0] > 5 * bars[1] > 0 and bars[2] == 1    # streaming dominates a wide stack
    assert sum(bars) <= widgets.LATENCY_BAR + 2


def test_the_latency_explorer_shows_a_part_below_zero_without_a_bar():
    """A busy machine can put the width-64 line's intercept below zero: the explorer still
    renders, says so on that row, and the bars share out the parts above zero."""
    base, _ = _latency_explorer()
    shape = widgets.latency_shape(base, 8, 512)
    parts = widgets.latency_breakdown(shape, bandwidth_gbs=16.0, dispatch_ms=0.4,
                                      fixed_ms=-0.3, cache=8_000_000)
    text = widgets.format_latency(shape, parts, bandwidth_gbs=16.0, cache=8_000_000)
    fixed = [line for line in text.splitlines() if "fixed per token" in line]
    assert fixed == ["  fixed per token             -0.3 (below zero in this run)"]
    bars = [line.count("\u2588") for line in text.splitlines() if "\u2588" in line]
    assert len(bars) == 2 and abs(sum(bars) - widgets.LATENCY_BAR) <= 1
    e = widgets.latency_explorer(base, bandwidth_gbs=16.0, dispatch_ms=-0.01, fixed_ms=-0.3,
                                 cache=8_000_000)
    assert len(e.frames) == len(widgets.LATENCY_LAYERS) * len(widgets.LATENCY_WIDTHS)


def test_figure_frames_are_measured_and_their_facts_stored():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from depthnotes.page import standard
    from depthnotes.page.explorer import FRAME_COLUMN_PX, stored_frames
    from depthnotes.page.plots import finding, new_figure, use_house_style

    use_house_style()

    def draw(legend_pt):
        fig, (ax,) = new_figure(per_row=1, height=2.6)
        ax.plot([0, 1], [0, 1], label="a line")
        ax.legend(fontsize=legend_pt)
        finding(ax, f"A legend at {legend_pt} pt")
        return fig

    e = Explorer("legends", [Control("legend_pt", "legend size", (6, 9.5))], draw)
    data, meta = e._repr_mimebundle_()
    output = {"output_type": "execute_result", "data": data, "metadata": meta}
    frames = stored_frames(output)
    assert [i for i, _, _ in frames] == [0, 1]
    small, house = ([standard.problems(facts, *standard.png_size(png), column=FRAME_COLUMN_PX)
                     for _, png, facts in frames])
    assert any("reads as" in p for p in small), small
    assert house == []
    assert frames[1][2]["png_px"] == list(standard.png_size(frames[1][1]))
    assert not plt.get_fignums()
    # stored without facts (drawn before frames were measured): every frame fails
    bare = {**output, "metadata": {}}
    assert all("use_house_style" in standard.problems(f, *standard.png_size(png))[0]
               for _, png, f in stored_frames(bare))
    # a text explorer has no figure frames and stores no facts
    assert isinstance(_text_explorer()._repr_mimebundle_(), dict)
    assert stored_frames({"data": {"text/html": _text_explorer().to_html()}}) == []
