"""The k-hop pointer-chasing task of chapter 3 (claim C5): correct answers, seeded, validated."""

import pytest
import torch

from depthnotes import ModelConfig
from depthnotes.data.tasks import IGNORE, PointerChasing
from depthnotes.training.tasks import query_accuracy
from oracles import follow_pointers
from depthnotes.training.loop import TrainConfig
from depthnotes.training.tasks import task_recipe, train_on_task


def decode(task, idx, targets):
    """Read a batch back by hand: the table, the queries' (k, x) and their targets."""
    n = task.n_nodes
    table = idx[:, :n]
    q = idx[:, n + 1:] - (n + 1)
    return table, q // n + 1, q % n, targets[:, n + 1:]


def test_shapes_and_vocabulary():
    task = PointerChasing(max_hops=3, n_nodes=8, n_queries=5)
    idx, targets = task.batch(4, seed=0)
    assert idx.shape == targets.shape == (4, task.seq_len) == (4, 8 + 1 + 5)
    assert idx.dtype == targets.dtype == torch.long
    assert int(idx.min()) >= 0 and int(idx.max()) < task.vocab_size == 8 + 1 + 3 * 8
    assert (idx[:, 8] == task.sep).all()
    assert (targets[:, :9] == IGNORE).all() and (targets[:, 9:] >= 0).all()


def test_table_is_a_permutation_and_answers_follow_k_pointers():
    """C5: each target is f^k(x), computed independently here by walking the table in Python."""
    task = PointerChasing(max_hops=4, n_nodes=6, n_queries=7)
    idx, targets = task.batch(32, seed=3)
    table, ks, xs, answers = decode(task, idx, targets)
    for b in range(32):
        f = table[b].tolist()
        assert sorted(f) == list(range(6))
        for j in range(7):
            x = int(xs[b, j])
            for _ in range(int(ks[b, j])):
                x = f[x]
            assert int(answers[b, j]) == x


def test_hop_mix_and_fixed_hops():
    task = PointerChasing(max_hops=3)
    _, ks, _, _ = decode(task, *task.batch(256, seed=1))
    assert set(ks.unique().tolist()) == {1, 2, 3}
    _, ks2, _, _ = decode(task, *task.batch(16, seed=1, hops=2))
    assert (ks2 == 2).all()


def test_same_seed_same_batch_and_different_seed_differs():
    task = PointerChasing(max_hops=2)
    a, b = task.batch(8, seed=5), task.batch(8, seed=5)
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
    assert not torch.equal(a[0], task.batch(8, seed=6)[0])


def test_sample_draws_from_the_generator_it_is_given():
    """The batch function form train.train calls: successive draws differ, a generator with
    the same seed repeats them, and batch(seed) is sample with a generator seeded so."""
    task = PointerChasing(max_hops=3)
    gen = torch.Generator().manual_seed(7)
    first, second = task.sample(4, gen), task.sample(4, gen)
    assert not torch.equal(first[0], second[0])
    again = torch.Generator().manual_seed(7)
    assert torch.equal(task.sample(4, again)[0], first[0])
    assert torch.equal(task.sample(4, again)[1], second[1])
    assert torch.equal(task.batch(4, seed=7)[0], first[0])


def test_answers_are_not_the_start_symbol_more_than_chance_allows():
    """The answer must depend on the table: for k=1 a permutation with few fixed points means
    f(x) == x about 1/n of the time, not always."""
    task = PointerChasing(max_hops=1, n_nodes=8)
    _, _, xs, answers = decode(task, *task.batch(512, seed=0))
    assert (answers == xs).float().mean().item() < 0.25


def test_follow_pointers_by_hand():
    table = torch.tensor([[1, 2, 0, 3]])          # 0->1->2->0, 3->3
    start = torch.tensor([[0, 3, 2]])
    assert follow_pointers(table, start, 0).tolist() == [[0, 3, 2]]
    assert follow_pointers(table, start, 1).tolist() == [[1, 3, 0]]
    assert follow_pointers(table, start, 2).tolist() == [[2, 3, 1]]
    assert follow_pointers(table, start, 3).tolist() == [[0, 3, 2]]
    with pytest.raises(ValueError, match="hops"):
        follow_pointers(table, start, -1)


@pytest.mark.parametrize("kwargs, err", [
    (dict(max_hops=0), ValueError), (dict(max_hops=2, n_nodes=1), ValueError),
    (dict(max_hops=2, n_queries=0), ValueError), (dict(max_hops=2.0), TypeError),
    (dict(max_hops=True), TypeError),
])
def test_bad_task_arguments(kwargs, err):
    with pytest.raises(err):
        PointerChasing(**kwargs)


def test_bad_batch_arguments():
    task = PointerChasing(max_hops=2)
    with pytest.raises(ValueError, match="batch_size"):
        task.batch(0, seed=0)
    with pytest.raises(ValueError, match="hops"):
        task.batch(4, seed=0, hops=3)


def test_train_on_task_checks_the_config_and_is_deterministic():
    task = PointerChasing(max_hops=2, n_nodes=4, n_queries=4)
    bad = ModelConfig(n_layer=1, d_model=16, n_head=2, vocab_size=50, context=task.seq_len)
    recipe = task_recipe(task, steps=5, batch_size=8, warmup_steps=2, eval_sequences=16)
    with pytest.raises(ValueError, match="vocab_size"):
        train_on_task(bad, task, recipe)
    cfg = bad.replace(vocab_size=task.vocab_size)
    with pytest.raises(ValueError, match="recipe.context"):
        train_on_task(cfg, task, recipe.replace(context=task.seq_len + 1))
    with pytest.raises(TypeError, match="TrainConfig"):
        train_on_task(cfg, task, {"steps": 5})
    _, r1 = train_on_task(cfg, task, recipe)
    _, r2 = train_on_task(cfg, task, recipe)
    assert r1.losses == r2.losses and r1.accuracy == r2.accuracy
    assert set(r1.accuracy) == {1, 2} and not r1.diverged and len(r1.losses) == 5
    _, r3 = train_on_task(cfg, task, recipe.replace(seed=1))
    assert r3.losses != r1.losses                        # the seed reaches init and batches


def test_curves_score_no_more_sequences_than_the_final_score():
    """A curve point scores ``curve_sequences`` sequences, or the recipe's ``eval_sequences``
    when fewer (a quick run's): the last point, after the last step, is then the final score
    itself."""
    task = PointerChasing(max_hops=2, n_nodes=4, n_queries=4)
    cfg = ModelConfig(n_layer=1, d_model=16, n_head=2, vocab_size=task.vocab_size,
                      context=task.seq_len)
    recipe = task_recipe(task, steps=4, batch_size=8, warmup_steps=2, eval_every=2,
                         eval_sequences=16)
    model, few = train_on_task(cfg, task, recipe, curve_sequences=128)
    assert few.curve_steps == (2, 4)
    for k in task.hops:
        assert few.accuracy_curves[k][-1] == few.accuracy[k] == query_accuracy(model, task, k, 16)
    model, many = train_on_task(cfg, task, recipe.replace(eval_sequences=256),
                                curve_sequences=128)
    for k in task.hops:
        assert many.accuracy_curves[k][-1] == query_accuracy(model, task, k, 128)
        assert many.accuracy[k] == query_accuracy(model, task, k, 256)
    # the two sizes score this model differently, so the equalities above tell them apart
    assert any(query_accuracy(model, task, k, 16) != query_accuracy(model, task, k, 128)
               for k in task.hops)


def test_a_task_recipe_is_a_train_config_with_the_tasks_optimizer():
    """One recipe type: a task trains with a TrainConfig whose optimizer settings are
    visible (and stored in a record), not hard-coded in the task driver."""
    task = PointerChasing(max_hops=2, n_nodes=4, n_queries=4)
    r = task_recipe(task, lr=1e-3)
    assert isinstance(r, TrainConfig) and r.context == task.seq_len and r.lr == 1e-3
    assert (r.weight_decay, r.beta2, r.min_lr_ratio, r.blowup_factor) == (0.01, 0.98, 0.0, None)
    with pytest.raises(ValueError, match="warmup_steps"):
        task_recipe(task, warmup_steps=-1)


def test_old_task_records_read_as_the_train_config_they_meant():
    """A task record stored before tasks shared TrainConfig (recipe keys steps, batch_size,
    lr, warmup, eval_sequences, eval_every) is read as task_recipe of those settings, so it
    stays current; a changed setting still shows."""
    from dataclasses import asdict

    from depthnotes.experiments.records import config_differences, current_form
    from depthnotes.experiments.spec import data_dict

    task = PointerChasing(max_hops=2, n_nodes=4, n_queries=4)
    old = {"steps": 5, "batch_size": 8, "lr": 3e-3, "warmup": 2, "eval_sequences": 16}
    stored = {"data": data_dict(task), "arms": [{"name": "a", "recipe": old}]}
    now = asdict(task_recipe(task, steps=5, batch_size=8, lr=3e-3, warmup_steps=2,
                             eval_sequences=16))
    assert config_differences(current_form(stored),
                              {"data": data_dict(task), "arms": [{"name": "a", "recipe": now}]}) == []
    changed = dict(now, lr=1e-3)
    assert config_differences(current_form(stored),
                              {"data": data_dict(task), "arms": [{"name": "a", "recipe": changed}]})


def test_query_accuracy_of_an_oracle_is_one():
    """query_accuracy scores argmax at query positions only: an oracle that puts its logit on
    the right answer scores 1, a constant guesser scores about chance."""
    task = PointerChasing(max_hops=2, n_nodes=5, n_queries=6)

    class Oracle(torch.nn.Module):
        def forward(self, idx):
            n = task.n_nodes
            table, q = idx[:, :n], idx[:, n + 1:] - (n + 1)
            ks, xs = q // n + 1, q % n
            ans = xs.clone()
            for k in range(1, task.max_hops + 1):
                ans = torch.where(ks >= k, torch.gather(table, 1, ans), ans)
            logits = torch.zeros(*idx.shape, task.vocab_size)
            logits[:, n + 1:].scatter_(2, ans[..., None], 1.0)
            return logits, None

    class Constant(torch.nn.Module):
        def forward(self, idx):
            logits = torch.zeros(*idx.shape, task.vocab_size)
            logits[..., 0] = 1.0
            return logits, None

    assert query_accuracy(Oracle(), task, hops=2, n_sequences=64) == 1.0
    assert abs(query_accuracy(Constant(), task, hops=1, n_sequences=512) - task.chance) < 0.05


def test_hop_marker_layout_answers_follow_k_pointers_at_the_start_symbol():
    """The "hop_marker" layout: a marker H_k, then the start symbol's own token; the target
    f^k(x) sits at the symbol, computed independently here by walking the table in Python."""
    task = PointerChasing(max_hops=3, n_nodes=6, n_queries=5, layout="hop_marker")
    assert task.vocab_size == 6 + 1 + 3 and task.seq_len == 6 + 1 + 2 * 5
    idx, targets = task.batch(32, seed=4)
    assert idx.shape == targets.shape == (32, task.seq_len)
    assert task.answer_positions.tolist() == [8, 10, 12, 14, 16]
    ks, xs = task.queries(idx)
    for b in range(32):
        f = idx[b, :6].tolist()
        assert sorted(f) == list(range(6)) and int(idx[b, 6]) == task.sep
        for j in range(5):
            marker, x = int(idx[b, 7 + 2 * j]), int(idx[b, 8 + 2 * j])
            assert marker == task.hop_marker(int(ks[b, j])) and x == int(xs[b, j]) < 6
            assert int(targets[b, 7 + 2 * j]) == IGNORE
            for _ in range(marker - 6):
                x = f[x]
            assert int(targets[b, 8 + 2 * j]) == x
    assert set(ks.unique().tolist()) == {1, 2, 3}
    assert (targets[:, :7] == IGNORE).all()


def test_queries_reads_back_both_layouts():
    for layout in ("query_tokens", "hop_marker"):
        task = PointerChasing(max_hops=2, n_nodes=5, n_queries=4, layout=layout)
        idx, targets = task.batch(8, seed=2)
        ks, xs = task.queries(idx)
        answers = targets[:, task.answer_positions]
        table = idx[:, :5]
        for k in (1, 2):
            walked = follow_pointers(table, xs, k)
            assert torch.equal(answers[ks == k], walked[ks == k])


def test_layout_is_checked_and_each_layout_has_its_own_query_tokens():
    with pytest.raises(ValueError, match="layout"):
        PointerChasing(max_hops=2, layout="pairs")
    with pytest.raises(ValueError, match="hop_marker"):
        PointerChasing(max_hops=2).hop_marker(1)
    with pytest.raises(ValueError, match="query_token"):
        PointerChasing(max_hops=2, layout="hop_marker").query_token(1, 0)
