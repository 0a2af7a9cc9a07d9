"""Named experiments and their records (depthnotes.experiments.registry, depthnotes.experiments.records)."""

import argparse
import json
import shutil

import pytest

from depthnotes.experiments.registry import EXPERIMENTS, get_experiment
from depthnotes.experiments.spec import window_means
from depthnotes.experiments.records import (DIGITS, REPO_RECORDS, Record, check_current,
                                            find_record, load_record, round_float,
                                            round_floats, run_experiment, validate_record,
                                            write_record)

STORED = sorted(REPO_RECORDS.glob("*.json"))


@pytest.fixture(scope="module")
def quick_records(tmp_path_factory):
    """``quick_records(name)``: the folder holding the quick variant of experiment ``name``,
    run and written the first time a test asks for it: each test asks only for the records it
    reads, so that a selection (``-k``) runs only those. (pytest-xdist runs this file whole in
    one worker, ``--dist loadfile``: nothing is shared between workers.)"""
    out = tmp_path_factory.mktemp("quick")

    def folder_with(name: str):
        if not (out / f"{name}.quick.json").is_file():
            write_record(run_experiment(get_experiment(name, quick=True), workers=1), out)
        return out

    return folder_with


# -- the stored records ------------------------------------------------------------------------
def test_every_experiment_has_a_stored_record_and_every_record_an_experiment():
    """Every named experiment has its record, except those the registry lists as not yet
    recorded (each with a reason); a listed one must not have a record."""
    from depthnotes.experiments.registry import UNRECORDED

    assert all(isinstance(why, str) and why for why in UNRECORDED.values())
    assert set(UNRECORDED) <= set(EXPERIMENTS)
    assert sorted(p.stem for p in STORED) == sorted(set(EXPERIMENTS) - set(UNRECORDED))


@pytest.mark.parametrize("path", STORED, ids=[p.stem for p in STORED])
def test_stored_record_layout(path):
    data = json.loads(path.read_text())
    validate_record(data, where=str(path))          # keys, one run per arm x seed, 6 digits
    assert data["quick"] is False and data["name"] == path.stem
    assert data["command"] == f"python -m depthnotes record {path.stem}"
    prov = data["provenance"]
    assert prov["wall_seconds"] > 0 and prov["workers"] >= 1
    assert prov["machine"]["cpu"] and prov["versions"]["torch"].startswith("2.13.0")
    for run in data["runs"]:
        assert run["curves"]["train_loss"] and run["final"]["steps_run"] >= 1


@pytest.mark.parametrize("path", STORED, ids=[p.stem for p in STORED])
def test_stored_record_matches_its_definition(path):
    """A record whose configuration differs from the package's definition is stale."""
    check_current(load_record(path.stem, directory=path.parent))


# -- quick variants: every experiment runs and writes a loadable, current record -------------
@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
def test_quick_variant_writes_a_loadable_record(quick_records, name):
    rec = load_record(name, directory=quick_records(name), quick=True)
    exp = get_experiment(name, quick=True)
    assert rec.quick and rec.name == name and rec.command == exp.command
    check_current(rec, exp)
    assert rec.arms == [a.name for a in exp.arms] and rec.seeds == list(exp.seeds)
    first = rec.arms[0]
    steps, values = rec.curve(first, "train_loss", rec.seeds[0])
    assert len(steps) == len(values) >= 1 and steps[-1] == exp.arms[0].recipe.steps
    assert set(rec.final("steps_run")) == set(rec.arms)
    all_steps, all_values = rec.curves(first, "train_loss")
    assert all_steps[0] == steps and all_values[0] == values and len(all_values) == len(rec.seeds)


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
    shutil.copy(quick_records("khop_depth_sweep") / "khop_depth_sweep.quick.json",
                folder / "records")
    monkeypatch.chdir(folder)
    assert find_record("khop_depth_sweep", quick=True) == \
        folder / "records" / "khop_depth_sweep.quick.json"
    assert load_record("khop_depth_sweep", quick=True).quick


def test_load_falls_back_to_the_repository(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)                        # no records/ here
    for name in EXPERIMENTS:
        if (REPO_RECORDS / f"{name}.json").exists():
            assert load_record(name).path == REPO_RECORDS / f"{name}.json"


def test_missing_record_names_the_command(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match=r"`python -m depthnotes record nope` "
                                                r"regenerates it"):
        load_record("nope")
    with pytest.raises(FileNotFoundError, match="--out"):
        load_record("nope", directory=tmp_path)


# -- chapter 6's sweep: the record's runs are budget_sweep's runs ------------------------------
def test_budget_record_is_chapter_6s_sweep():
    """Chapter 6 reads its sweep from the record and trains one shape again with
    ``budget_sweep``; both computed here, on one machine, must agree exactly (this check used
    to sit in chapter 6, against a stored file). The quick recipe keeps it fast; the real experiment's shapes and
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
    record = run_experiment(quick, workers=1)
    recipe = quick.arms[0].recipe.replace(lr=3e-3)
    before = torch.get_num_threads()
    torch.set_num_threads(1)                          # the thread count the record's jobs use
    try:
        points = budget_sweep(shapes, recipe, corpus=corpus, lr_rule="1/d", d_ref=64, seed=0)
    finally:
        torch.set_num_threads(before)
    assert [r["final"]["eval_loss"] for r in record["runs"]] == \
        [round_float(p.val_loss) for p in points]


# -- numbers -----------------------------------------------------------------------------------
def test_rounding_and_layout_checks():
    assert round_float(0.42342733496544616) == 0.423427 and round_float(float("nan")) is None
    assert round_floats({"a": (1.23456789, 2), "b": [float("inf")]}) == {"a": [1.23457, 2],
                                                                      "b": [None]}
    with pytest.raises(TypeError, match="a record holds only"):
        round_floats({"a": object()})
    assert DIGITS == 6


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


def test_window_means():
    assert window_means([1.0, 2.0, 3.0], points=5) == (1, [1.0, 2.0, 3.0])
    assert window_means([1.0, 3.0, 5.0, 7.0, 9.0], points=2) == (3, [3.0, 8.0])


def test_unknown_experiment():
    with pytest.raises(KeyError, match="no experiment named 'nope'"):
        get_experiment("nope")


# -- the command ---------------------------------------------------------------------------------
def _command(argv):
    from depthnotes.cli import record

    parser = argparse.ArgumentParser(prog="python -m depthnotes record")
    record.add_arguments(parser)
    return record.run(parser.parse_args(argv), parser)


def test_command_list(capsys):
    assert _command(["--list"]) == 0
    out = capsys.readouterr().out
    for name in EXPERIMENTS:
        assert f"{name}: " in out


def test_command_quick_writes_elsewhere(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("DEPTHNOTES_QUIET", "1")
    assert _command(["deepnorm_1000_layers", "--quick", "--workers", "1",
                     "--out", str(tmp_path)]) == 0
    assert (tmp_path / "deepnorm_1000_layers.quick.json").is_file()
    assert "wrote" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        _command(["nope"])


# -- kept models (an experiment with keep_models) ------------------------------------------------
def test_kept_models_are_the_recorded_runs(quick_records):
    from depthnotes.experiments.records import load_model
    from depthnotes.data.tasks import query_accuracy

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

def test_a_field_added_at_its_default_does_not_make_a_record_stale():
    from depthnotes.experiments.records import ADDED_FIELDS, config_differences

    stored = {"model": {"n_layer": 2}}
    for field, default in ADDED_FIELDS.items():
        assert config_differences(stored, {"model": {"n_layer": 2, field: default}}) == []
        changed = config_differences(stored, {"model": {"n_layer": 2, field: "other"}})
        assert changed and field in changed[0]
    assert config_differences(stored, {"model": {"n_layer": 2, "new_option": None}})


def test_the_second_rate_runs_the_shapes_its_rule_picks():
    """induction_rate_check's rule, fixed before the sweep ran: every shape of
    induction_depth_sweep that leaves some k below SOLVED with some seed at the first rate.
    The shapes written into the definition are the ones the stored sweep gives."""
    from depthnotes.experiments.ch3 import INDUCTION_UNDONE, induction_rate_check
    from depthnotes.verdicts.ch3_chasing import SOLVED

    sweep = load_record("induction_depth_sweep")
    finals = [sweep.final(f"accuracy_k{k}") for k in sweep.config["data"]["hops"]]
    undone = {(sweep.arm(a)["info"]["n_layer"], sweep.arm(a)["info"]["d_model"])
              for a in sweep.arms if any(acc < SOLVED for f in finals for acc in f[a])}
    assert undone == set(INDUCTION_UNDONE)
    check = induction_rate_check()
    assert {(a.info["n_layer"], a.info["d_model"]) for a in check.arms} == undone
    assert {a.recipe.lr for a in check.arms} == {3e-3}
