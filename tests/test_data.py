"""Tests of depthnotes.data.corpus: the shipped character corpus and its batches."""

import math
import sys

import pytest
import torch

from depthnotes.data.corpus import (CharCorpus, build_python_topics_text, corpus_text,
                                    load_corpus, unigram_loss)


@pytest.fixture(scope="module")
def corpus() -> CharCorpus:
    return load_corpus()


def test_vocab_is_the_sorted_characters_of_the_file(corpus):
    text = corpus_text()
    assert corpus.chars == "".join(sorted(set(text)))
    assert corpus.vocab_size == 94
    assert all(c == "\n" or 32 <= ord(c) < 127 for c in corpus.chars)


def test_splits_are_a_contiguous_90_10_cut(corpus):
    n = len(corpus_text())
    assert len(corpus.train) + len(corpus.val) == n
    assert len(corpus.val) == n - round(0.9 * n)
    assert corpus.train.dtype == torch.long and corpus.train.dim() == 1
    assert corpus.decode(corpus.train[:50]) + corpus.decode(corpus.val[:0]) == corpus_text()[:50]
    assert corpus.decode(corpus.val[-20:]) == corpus_text()[-20:]


def test_encode_decode_round_trip(corpus):
    s = 'def f(x):\n    return x ** 2  # "square"'
    ids = corpus.encode(s)
    assert ids.dtype == torch.long and ids.shape == (len(s),)
    assert corpus.decode(ids) == s
    assert corpus.decode(ids.tolist()) == s


def test_encode_rejects_unknown_characters(corpus):
    with pytest.raises(ValueError, match="not in the"):
        corpus.encode("caf\u00e9")
    with pytest.raises(TypeError):
        corpus.encode(b"bytes")
    with pytest.raises(ValueError, match="outside the vocabulary"):
        corpus.decode([corpus.vocab_size])


def test_batches_are_shifted_windows_and_seeded(corpus):
    g = torch.Generator().manual_seed(3)
    x, y = corpus.get_batch("train", 4, 16, g)
    assert x.shape == y.shape == (4, 16)
    assert torch.equal(x[:, 1:], y[:, :-1])
    # each row is a window of the training split
    text = corpus.decode(corpus.train)
    for row_x, row_y in zip(x, y):
        window = corpus.decode(row_x) + corpus.decode(row_y[-1:])
        assert window in text
    x2, y2 = corpus.get_batch("train", 4, 16, torch.Generator().manual_seed(3))
    assert torch.equal(x, x2) and torch.equal(y, y2)
    x3, _ = corpus.get_batch("train", 4, 16, torch.Generator().manual_seed(4))
    assert not torch.equal(x, x3)


def test_val_batches_come_from_the_val_split(corpus):
    x, y = corpus.get_batch("val", 3, 32, torch.Generator().manual_seed(0))
    text = corpus.decode(corpus.val)
    for row_x, row_y in zip(x, y):
        assert corpus.decode(row_x) + corpus.decode(row_y[-1:]) in text


def test_batches_function(corpus):
    fn = corpus.batches(2, 8)
    x, y = fn(torch.Generator().manual_seed(0))
    assert x.shape == (2, 8)


@pytest.mark.parametrize("kwargs, err", [
    (dict(split="test", batch_size=2, context=8), ValueError),
    (dict(split="train", batch_size=0, context=8), ValueError),
    (dict(split="train", batch_size=2, context=2.5), TypeError),
    (dict(split="val", batch_size=2, context=10 ** 6), ValueError),
])
def test_get_batch_validates(corpus, kwargs, err):
    with pytest.raises(err):
        corpus.get_batch(**kwargs)


def test_load_corpus_validates():
    with pytest.raises(ValueError, match="unknown corpus"):
        load_corpus("shakespeare")
    with pytest.raises(ValueError, match="val_fraction"):
        load_corpus(val_fraction=1.0)


def test_loaded_tensors_are_copies():
    a = load_corpus()
    original = int(a.train[0])
    a.train[0] = (original + 1) % a.vocab_size
    assert int(load_corpus().train[0]) == original


@pytest.mark.skipif(sys.version_info[:3] != (3, 11, 7), reason="the file was built with 3.11.7")
def test_shipped_file_rebuilds_byte_for_byte():
    assert build_python_topics_text() == corpus_text()


def test_unigram_loss_is_the_one_of_the_package(corpus):
    """One function for the yardstick: chapter 5's verdicts re-export this one, and on the
    shipped corpus it is the entropy of the training split's character frequencies."""
    from depthnotes.verdicts import ch5_fixes

    assert ch5_fixes.unigram_loss is unigram_loss
    counts = torch.bincount(corpus.train, minlength=corpus.vocab_size).double()
    p = counts[counts > 0] / counts.sum()
    assert unigram_loss(corpus) == pytest.approx(float(-(p * p.log()).sum()), rel=1e-12)
    assert 0 < unigram_loss(corpus) < math.log(corpus.vocab_size)
