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
