"""The quick variants of the pointer-chasing records (``khop*``, chapter 3), and the tests that
read them: the kept models. The other experiments' quick variants are in
``test_records_quick_other.py`` (the split: ``quick_split``)."""

import pytest

from depthnotes.experiments.records import load_record
from depthnotes.experiments.registry import get_experiment
from quick_split import KHOP, check_quick_variant


@pytest.mark.parametrize("name", KHOP)
def test_quick_variant_writes_a_loadable_record(quick_records, name):
    check_quick_variant(quick_records(name), name)


# -- kept models (an experiment with keep_models) ------------------------------------------------
def test_kept_models_are_the_recorded_runs(quick_records):
    from depthnotes.experiments.records import load_model
    from depthnotes.training.tasks import query_accuracy

    folder = quick_records("khop16_models")
    rec = load_record("khop16_models", directory=folder, quick=True)
    assert (folder / "khop16_models.quick.models.pt").is_file()
    assert rec.config["keep_models"] is True
    exp = get_experiment("khop16_models", quick=True)
    for arm in rec.arms:
        model = load_model(rec, arm, 0)
        acc = query_accuracy(model, exp.data, 2, exp.arms[0].recipe.eval_sequences)
        assert acc == pytest.approx(rec.run(arm, 0)["final"]["accuracy_k2"], abs=1e-5)
    with pytest.raises(KeyError, match="no run of arm"):
        load_model(rec, "no such arm", 0)
    sweep = load_record("khop16_depth_sweep", directory=quick_records("khop16_depth_sweep"),
                        quick=True)
    assert "keep_models" not in sweep.config
    with pytest.raises(FileNotFoundError, match="no stored models"):
        load_model(sweep, sweep.arms[0], 0)


def test_kept_models_retrain_the_sweeps_seed_0_runs(quick_records):
    """Chapter 3 reads the kept models as the sweep's seed-0 models: training is
    deterministic, so the same arm and seed give the same results."""
    kept = load_record("khop16_models", directory=quick_records("khop16_models"), quick=True)
    sweep = load_record("khop16_depth_sweep", directory=quick_records("khop16_depth_sweep"),
                        quick=True)
    for arm in kept.arms:
        assert kept.arm(arm) == sweep.arm(arm)
        assert kept.run(arm, 0)["final"] == sweep.run(arm, 0)["final"]
