"""The quick variants of every experiment that is not in ``test_records_quick_khop.py`` (the
split: ``quick_split``), and the tests that read them: a changed definition, a quick record
never written over the real one, finding a record in a handout's folder, the layout checks,
chapter 6's sweep."""

import json
import shutil

import pytest

from depthnotes.experiments.records import (REPO_RECORDS, Record, check_current, find_record,
                                            load_record, round_float, validate_record,
                                            write_record)
from depthnotes.experiments.registry import get_experiment
from quick_split import OTHER, check_quick_variant


@pytest.mark.parametrize("name", OTHER)
def test_quick_variant_writes_a_loadable_record(quick_records, name):
    check_quick_variant(quick_records(name), name)


def test_a_changed_definition_fails_and_names_the_command(quick_records):
    rec = load_record("budget_sweep_300_steps", directory=quick_records("budget_sweep_300_steps"),
                      quick=True)
    config = json.loads(json.dumps(rec.config))
    config["arms"][0]["recipe"]["lr"] *= 2
    stale = Record(**{**rec.__dict__, "config": config})
    with pytest.raises(ValueError, match=r"(?s)stale.*arms\[0\]\.recipe\.lr.*"
                                         r"`python -m depthnotes record budget_sweep_300_steps "
                                         r"--quick`"):
        check_current(stale)
    full = get_experiment("budget_sweep_300_steps")
    with pytest.raises(ValueError, match=r"`python -m depthnotes record budget_sweep_300_steps`"):
        check_current(rec, full)                       # quick steps differ from the real ones


def test_quick_record_is_never_written_over_the_real_one(quick_records):
    folder = quick_records("deepnorm_1000_layers")
    data = json.loads((folder / "deepnorm_1000_layers.quick.json").read_text())
    with pytest.raises(ValueError, match="quick record is not written"):
        write_record(data, REPO_RECORDS)


# -- finding a record from any working directory -----------------------------------------------
def test_load_from_a_records_folder_next_to_the_working_directory(quick_records, tmp_path,
                                                                  monkeypatch):
    folder = tmp_path / "handout"
    (folder / "records").mkdir(parents=True)
    shutil.copy(quick_records("deepnorm_1000_layers") / "deepnorm_1000_layers.quick.json",
                folder / "records")
    monkeypatch.chdir(folder)
    assert find_record("deepnorm_1000_layers", quick=True) == \
        folder / "records" / "deepnorm_1000_layers.quick.json"
    assert load_record("deepnorm_1000_layers", quick=True).quick


# -- chapter 6's sweep: the record's runs are budget_sweep's runs ------------------------------
def test_budget_record_is_chapter_6s_sweep(quick_records):
    """Chapter 6 reads its sweep from the record and trains one shape again with
    ``budget_sweep``; both computed here, on one machine, must agree exactly (this check used
    to sit in chapter 6, against a stored file). The quick recipe keeps it fast (the quick
    record the other tests of this file read); the real experiment's shapes and
    learning rates are compared with chapter 6's settings without training."""
    import torch

    from depthnotes import ModelConfig
    from depthnotes.training.budget import budget_sweep, lr_for_width
    from depthnotes.data.corpus import load_corpus
    from depthnotes.core.params import shapes_for_budget

    corpus = load_corpus()
    base = ModelConfig(n_layer=1, d_model=64, n_head=2, vocab_size=corpus.vocab_size,
                       context=64)
    budgets = {25_000: [1, 2, 3, 4, 6, 8], 100_000: [1, 2, 4, 8]}   # chapter 6, cell 3
    shapes = [s for P, depths in budgets.items()
              for s in shapes_for_budget(P, base, tolerance=0.08, d_multiple=2, n_layers=depths)]
    real = get_experiment("budget_sweep_300_steps")
    assert [a.model for a in real.arms] == [s.config for s in shapes]
    assert [a.recipe.lr for a in real.arms] == [lr_for_width(3e-3, s.d_model, 64, "1/d")
                                                for s in shapes]
    assert real.arms[0].recipe.replace(lr=3e-3) == real.arms[0].recipe.__class__(
        steps=300, batch_size=16, context=64, lr=3e-3, warmup_steps=20, eval_batches=8)

    quick = get_experiment("budget_sweep_300_steps", quick=True)
    folder = quick_records("budget_sweep_300_steps")
    record = json.loads((folder / "budget_sweep_300_steps.quick.json").read_text())
    recipe = quick.arms[0].recipe.replace(lr=3e-3)
    before = torch.get_num_threads()
    torch.set_num_threads(1)                          # the thread count the record's jobs use
    try:
        points = budget_sweep(shapes, recipe, corpus=corpus, lr_rule="1/d", d_ref=64, seed=0)
    finally:
        torch.set_num_threads(before)
    assert [r["final"]["eval_loss"] for r in record["runs"]] == \
        [round_float(p.val_loss) for p in points]


def test_validate_refuses_long_floats_and_missing_runs(quick_records):
    quick = quick_records("deepnorm_1000_layers") / "deepnorm_1000_layers.quick.json"
    data = json.loads(quick.read_text())
    data["runs"][0]["final"]["eval_loss"] = 0.1234567891
    with pytest.raises(ValueError, match="more than 6 significant digits"):
        validate_record(data)
    data = json.loads(quick.read_text())
    del data["runs"][0]
    with pytest.raises(ValueError, match="one per arm and seed"):
        validate_record(data)
    with pytest.raises(ValueError, match="missing keys"):
        validate_record({"name": "x"})


# -- chapter 6's C13: the pruning rate grid read from its records -------------------------------
def test_pruning_grid_reads_the_quick_variants_of_all_its_records(quick_records):
    """``load_pruning_grid`` loads every record of ``PRUNING_RECORDS`` (checked against its
    definition) and puts each arm of layer_pruning at the rates of all of them, with a pick
    over every rate and the pruning rule read at each arm's best."""
    from depthnotes.experiments.ch6 import PRUNE_LR
    from depthnotes.verdicts.ch6_redundancy import (PRUNING_RECORDS, judge_pruning_at_best,
                                                    load_pruning_grid)
    from depthnotes.verdicts.evidence import OUTCOMES

    for name in PRUNING_RECORDS:
        folder = quick_records(name)
    records, grid = load_pruning_grid(directory=folder, quick=True)
    assert [r.name for r in records] == list(PRUNING_RECORDS)
    assert grid.rates == tuple(PRUNE_LR * f for f in (0.5, 1, 2, 4))
    base = get_experiment("layer_pruning", quick=True)
    assert len(grid.picks) == len(base.arms)
    assert all(p.rates == grid.rates for p in grid.picks.values())
    check = judge_pruning_at_best(grid)
    assert check.word in OUTCOMES and set(check.picks) == set(grid.picks)
    with pytest.raises(FileNotFoundError):
        load_pruning_grid(("layer_pruning", "no_such_record"), directory=folder, quick=True)
