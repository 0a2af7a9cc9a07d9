"""Tests of depthnotes.data.corpus: the shipped character corpus and its batches."""

import ast
import json
import math
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from depthnotes.data.corpus import (CharCorpus, build_python_topics_text, corpus_text,
                                    load_corpus, token_entropy, unigram_loss)

ROOT = Path(__file__).resolve().parents[1]


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


def python_sources():
    """(where, source) of every piece of Python the project ships: the package, the tests, the
    benchmarks, and the notebooks' code cells (IPython's ``%`` and ``!`` lines left out)."""
    files = [*(ROOT / "depthnotes").rglob("*.py"), *(ROOT / "tests").glob("*.py"),
             *(ROOT / "benchmarks").glob("*.py")]
    for path in sorted(files):
        yield str(path.relative_to(ROOT)), path.read_text()
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] == "code":
                lines = "".join(cell["source"]).splitlines()
                yield f"{path.name} cell {cell['id']}", "\n".join(
                    "" if line.lstrip().startswith(("%", "!")) else line for line in lines)


def module_level(tree: ast.Module):
    """The nodes of a module outside its functions (what binds the module's own names)."""
    todo = list(tree.body)
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(node))


def test_unigram_loss_has_one_home_and_one_import_path():
    """The yardstick of chapters 4 and 5 is written once, in ``depthnotes.data.corpus``, and is
    imported only from there: no second definition anywhere (package, notebooks, tests,
    benchmarks), no name bound to it, every import naming its home, and no other module of the
    package holding it as a module-level name (a re-export: a second path to import it by; a
    package module that needs it imports it inside the function that calls it)."""
    home, defined, bound, imported, exported = "depthnotes.data.corpus", [], [], [], []
    for where, source in python_sources():
        tree = ast.parse(source, filename=where)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                    and node.name == "unigram_loss":
                defined.append(where)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(t, ast.Name) and t.id == "unigram_loss" for t in targets):
                    bound.append(where)
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if "unigram_loss" in (alias.name, alias.asname):
                        imported.append((where, "." * node.level + (node.module or "")))
        if where.startswith("depthnotes/") and where != "depthnotes/data/corpus.py":
            exported += [where for node in module_level(tree) if isinstance(node, ast.ImportFrom)
                         and any("unigram_loss" in (a.name, a.asname) for a in node.names)]
    assert defined == ["depthnotes/data/corpus.py"]
    assert bound == []
    assert imported, "nothing imports unigram_loss: the scan read nothing"
    assert [(where, module) for where, module in imported if module != home] == []
    assert exported == []


def test_unigram_loss_is_the_entropy_of_the_frequencies(corpus):
    """On constructed counts (ids that never occur add nothing) and on the shipped corpus: the
    entropy of the training split's character frequencies, in nats."""
    p = torch.tensor([2, 2, 4]).double() / 8
    constructed = SimpleNamespace(train=torch.tensor([0, 1, 0, 1, 2, 2, 2, 2]), vocab_size=5)
    assert unigram_loss(constructed) == pytest.approx(float(-(p * p.log()).sum()), rel=1e-12)
    counts = torch.bincount(corpus.train, minlength=corpus.vocab_size).double()
    p = counts[counts > 0] / counts.sum()
    assert unigram_loss(corpus) == pytest.approx(float(-(p * p.log()).sum()), rel=1e-12)
    assert 0 < unigram_loss(corpus) < math.log(corpus.vocab_size)


def test_token_entropy_takes_plain_ids():
    """The entropy of any id sequence (a list or a tensor), in nats: uniform over two ids is
    log 2, one repeated id is 0, and ids that never occur (5 here) add nothing."""
    assert token_entropy([0, 1, 0, 1]) == pytest.approx(math.log(2), rel=1e-12)
    assert token_entropy(torch.tensor([3, 3, 3])) == 0.0
    assert token_entropy([0, 1, 0, 1, 6, 6, 6, 6]) == pytest.approx(
        -(0.5 * math.log(0.25) + 0.5 * math.log(0.5)), rel=1e-12)
