"""Named experiments and their records (depthnotes.experiments.registry, depthnotes.experiments.records).

The stored records, finding and rounding, the command. The quick variant of every experiment
runs in ``test_records_quick_khop.py`` and ``test_records_quick_other.py`` (split for the test
workers: ``quick_split``), with the tests that read those quick records."""

import argparse
import json

import pytest

from depthnotes.experiments.registry import EXPERIMENTS, get_experiment
from depthnotes.experiments.spec import window_means
from depthnotes.experiments.records import (DIGITS, REPO_RECORDS, check_current, load_record,
                                            round_float, round_floats, validate_record)

STORED = sorted(REPO_RECORDS.glob("*.json"))


# -- the stored records ------------------------------------------------------------------------
def test_every_experiment_has_a_stored_record_and_every_record_an_experiment():
    """Every named experiment has its record, except those the registry lists as not yet
    recorded (each with a reason); a listed one must not have a record."""
    from depthnotes.experiments.registry import UNRECORDED

    assert all(isinstance(why, str) and why for why in UNRECORDED.values())
    assert set(UNRECORDED) <= set(EXPERIMENTS)
    assert sorted(p.stem for p in STORED) == sorted(set(EXPERIMENTS) - set(UNRECORDED))


def test_every_seeded_corpus_experiment_scores_its_seeds_on_the_same_text_or_says_why():
    """A comparison of seeds is read against their spread, so each seed is scored on the same
    held-out text (``TrainConfig.eval_seed``) unless the registry lists the experiment in
    ``PER_SEED_EVAL`` with why; a listed one really does draw per seed. (Task experiments score
    fixed sequences whatever the seed: ``training.tasks.train_on_task``.)"""
    from depthnotes.experiments.registry import PER_SEED_EVAL

    assert all(isinstance(why, str) and why for why in PER_SEED_EVAL.values())
    assert set(PER_SEED_EVAL) <= set(EXPERIMENTS)
    for name in EXPERIMENTS:
        exp = get_experiment(name)
        if not isinstance(exp.data, str) or len(exp.seeds) < 2:
            continue
        fixed = {a.recipe.eval_seed is not None for a in exp.arms}
        assert fixed == ({False} if name in PER_SEED_EVAL else {True}), (
            f"{name}: set eval_seed on every arm, or list it in PER_SEED_EVAL with why")


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


def test_every_full_task_experiment_scores_its_curves_on_curve_sequences():
    """A task's accuracy curves score ``CURVE_SEQUENCES`` sequences, or the final score's
    ``eval_sequences`` when fewer (``train_on_task``: a quick run's curves stay cheap). The
    full experiments' descriptions give the former, so each scores at least that many at
    the end."""
    from depthnotes.training.tasks import CURVE_SEQUENCES

    for name in EXPERIMENTS:
        exp = get_experiment(name)
        if exp.data_kind != "corpus":
            assert f"({CURVE_SEQUENCES} sequences" in exp.measures, name
            assert all(a.recipe.eval_sequences >= CURVE_SEQUENCES for a in exp.arms), name


def test_every_experiment_has_its_quick_run_in_one_file():
    """The quick variants are split over two files (``quick_split``): every experiment is in
    exactly one of them."""
    from quick_split import KHOP, OTHER

    assert sorted(KHOP + OTHER) == sorted(EXPERIMENTS) and not set(KHOP) & set(OTHER)
    assert KHOP and OTHER


# -- finding a record from any working directory -----------------------------------------------
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


# -- numbers -----------------------------------------------------------------------------------
def test_rounding_and_layout_checks():
    assert round_float(0.42342733496544616) == 0.423427 and round_float(float("nan")) is None
    assert round_floats({"a": (1.23456789, 2), "b": [float("inf")]}) == {"a": [1.23457, 2],
                                                                      "b": [None]}
    with pytest.raises(TypeError, match="a record holds only"):
        round_floats({"a": object()})
    assert DIGITS == 6


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
