"""What trained models write (``measure.samples``) and the record that stores it
(``experiments.samples``): the sampler's contract, bad input, and that each sampled arm is the
one its chapter scores."""

from __future__ import annotations

import pytest
import torch

from depthnotes import ModelConfig, Transformer
from depthnotes.data.corpus import load_corpus
from depthnotes.measure.samples import PROMPT, SampleSpec, continue_text


@pytest.fixture(scope="module")
def corpus():
    return load_corpus()


def _model(corpus, seed=0):
    return Transformer(ModelConfig(n_layer=1, d_model=16, n_head=2, vocab_size=corpus.vocab_size,
                                   context=16), seed=seed)


def test_a_sample_is_the_prompt_and_the_characters_asked_for(corpus):
    text = continue_text(_model(corpus), corpus, SampleSpec(chars=30))
    assert text.startswith(PROMPT) and len(text) == len(PROMPT) + 30
    assert set(text) <= set(corpus.decode(list(range(corpus.vocab_size))))


def test_the_same_seed_gives_the_same_text_and_another_seed_another(corpus):
    model = _model(corpus)
    a, b = (continue_text(model, corpus, SampleSpec(chars=40, seed=s)) for s in (0, 0))
    c = continue_text(model, corpus, SampleSpec(chars=40, seed=1))
    assert a == b and a != c


def test_the_model_differs_and_the_random_numbers_do_not(corpus):
    """Two models sample from the same generator: different models, different text."""
    spec = SampleSpec(chars=40)
    assert continue_text(_model(corpus, 0), corpus, spec) != \
        continue_text(_model(corpus, 1), corpus, spec)


def test_sampling_keeps_no_gradient_and_leaves_eval_mode(corpus):
    model = _model(corpus).train()
    continue_text(model, corpus, SampleSpec(chars=5))
    assert not model.training
    assert all(p.grad is None for p in model.parameters())


def test_a_sample_longer_than_the_context_conditions_on_the_last_window(corpus):
    """The model sees at most its context: 16 characters here, 80 sampled."""
    model = _model(corpus)
    seen = []
    real = model.forward
    model.forward = lambda ids, *a, **k: (seen.append(ids.shape[1]), real(ids, *a, **k))[1]
    continue_text(model, corpus, SampleSpec(chars=80))
    assert max(seen) == 16


@pytest.mark.parametrize("field, value, message", [
    ("prompt", "", "prompt must be a non-empty string"),
    ("chars", 0, r"chars must be a whole number >= 1"),
    ("chars", 2.5, r"chars must be a whole number >= 1"),
    ("temperature", 0.0, r"temperature must be > 0"),
])
def test_a_wrong_spec_names_the_field(field, value, message):
    with pytest.raises(ValueError, match=f"SampleSpec.{message}"):
        SampleSpec(**{field: value})


def test_a_prompt_outside_the_vocabulary_is_refused(corpus):
    with pytest.raises(Exception, match="vocabulary|not in"):
        continue_text(_model(corpus), corpus, SampleSpec(prompt="\u2603 snowman"))


# -- the record's arms ---------------------------------------------------------------------------
def test_each_sampled_arm_is_its_source_arm_with_a_sample_spec():
    from depthnotes.experiments.registry import get_experiment
    from depthnotes.experiments.samples import SAMPLED_ARMS

    exp = get_experiment("text_samples")
    assert len(exp.arms) == len(SAMPLED_ARMS) and exp.seeds == (0,)
    for arm, (src, name) in zip(exp.arms, SAMPLED_ARMS):
        source = {a.name: a for a in get_experiment(src).arms}[name]
        assert (arm.name, arm.model, arm.recipe) == (source.name, source.model, source.recipe)
        assert arm.info["source"] == src and SampleSpec(**arm.info["sample"]) == SampleSpec()
        assert {k: v for k, v in arm.info.items() if k not in ("source", "sample")} == \
            source.info


def test_chapter_4_and_5_arms_are_at_the_rate_chapter_4_scores():
    """Each postnorm_failure_depth arm sampled is the one ``depth_outcomes`` picks for its
    family and depth (its best rate), and the outcomes are the ones the pages describe."""
    from depthnotes.data.corpus import unigram_loss
    from depthnotes.experiments.records import load_record
    from depthnotes.experiments.samples import SAMPLED_ARMS
    from depthnotes.verdicts.ch4_trainability import UNIGRAM_MARGIN, depth_outcomes

    out = depth_outcomes(load_record("postnorm_failure_depth"), unigram_loss(load_corpus()),
                         UNIGRAM_MARGIN)
    picked = {r.arm: r.outcome for rows in out.values() for r in rows}
    names = [n for src, n in SAMPLED_ARMS if src == "postnorm_failure_depth"]
    assert [picked.get(n) for n in names] == ["trains", "stops", "trains", "trains"]


def test_chapter_8_arms_are_x2s_rates():
    """L = 4 at its best rate; L = 64 at that rate (X2's reused rate) and at its own best."""
    from depthnotes.experiments.records import combine_records, load_record
    from depthnotes.experiments.samples import SAMPLED_ARMS
    from depthnotes.verdicts.ch8_depth import lr_optima

    optima = lr_optima(combine_records(load_record("depth_lr_transfer"),
                                       load_record("depth_lr_transfer_64")))
    best = {o.n_layer: o.best for o in optima["standard"]}
    names = [n for src, n in SAMPLED_ARMS if src.startswith("depth_lr_transfer")]
    assert names == [f"standard L=4 lr={best[4]:g}", f"standard L=64 lr={best[4]:g}",
                     f"standard L=64 lr={best[64]:g}"]


def test_wrapped_keeps_every_character_and_fits_the_width():
    from depthnotes.measure.samples import wrapped

    text = "a" * 150 + "\n  indented\n\nend"
    out = wrapped(text, width=72)
    assert max(map(len, out.split("\n"))) == 72
    assert out.replace("\n", "") == text.replace("\n", "")
    assert out.split("\n")[3:] == ["  indented", "", "end"]
    assert wrapped("\tx") == "    x"
    with pytest.raises(ValueError, match="width must be >= 1"):
        wrapped("x", width=0)


def test_the_prompt_is_held_out_text_and_the_header_says_so(corpus):
    """The pages call the prompt held-out text: it occurs in the validation split and not in
    the training split."""
    from depthnotes.measure.samples import header

    assert PROMPT in corpus.decode(corpus.val) and PROMPT not in corpus.decode(corpus.train)
    text = header()
    flat = text.replace("\n", " ")
    assert f'"{PROMPT}" (held-out text)' in flat
    assert "200 characters" in flat and "temperature 0.7" in flat
    assert max(map(len, text.splitlines())) <= 72
