"""A record's journal (depthnotes.experiments.journal): an interrupted record keeps its
finished runs, the next sitting trains only the missing ones, and the record says so."""

import pytest
import torch

from depthnotes.experiments import records
from depthnotes.experiments.journal import Journal, config_hash, journal_dir
from depthnotes.experiments.registry import get_experiment


def _fake_result(job):
    """A run's result without training: distinct per (arm, seed), a NaN in its curve as a
    diverged run has."""
    value = (len(job.arm.name) + 10 * job.seed) / 7.0
    return {"curves": {"step": [0, 1], "loss": [value, float("nan")]},
            "final": {"loss": value}, "seconds": 1.0}


class _Interrupted(Exception):
    pass


def _fake_parallel(stop_after=None, seen=None):
    """A stand-in for run_parallel: fake results, ``on_result`` called as each finishes, and
    an interruption (as a stopped session) after ``stop_after`` jobs."""
    def run(fn, jobs, *, workers=None, desc=None, costs=None, labels=None, on_result=None):
        if seen is not None:
            seen.extend((j.arm.name, j.seed) for j in jobs)
        out = []
        for k, job in enumerate(jobs):
            if stop_after is not None and k == stop_after:
                raise _Interrupted
            out.append(_fake_result(job))
            if on_result is not None:
                on_result(k, out[-1])
        return out
    return run


@pytest.fixture
def experiment():
    return get_experiment("looped_khop", quick=True)


def test_an_interrupted_record_resumes_with_only_the_missing_runs(tmp_path, monkeypatch,
                                                                   experiment):
    jobs = experiment.jobs()
    assert len(jobs) >= 3
    where = journal_dir(tmp_path, experiment.name, experiment.quick)
    monkeypatch.setattr(records, "run_parallel", _fake_parallel(stop_after=2))
    with pytest.raises(_Interrupted):
        records.run_experiment(experiment, workers=1,
                               journal=Journal(where, experiment.config_dict()))
    assert len(Journal(where, experiment.config_dict()).done()) == 2
    assert not list(where.glob("*.tmp"))            # every file written whole

    seen = []
    monkeypatch.setattr(records, "run_parallel", _fake_parallel(seen=seen))
    resumed = records.run_experiment(experiment, workers=1,
                                     journal=Journal(where, experiment.config_dict()))
    assert sorted(seen) == sorted((j.arm.name, j.seed) for j in jobs[2:])   # not the first two
    once = records.run_experiment(experiment, workers=1)                   # in one sitting
    assert resumed["runs"] == once["runs"]          # the same record, run for run
    assert resumed["runs"][0]["curves"]["loss"][1] is None   # a NaN stored as a record does
    info = resumed["provenance"]["resumed"]
    assert info["runs_from_journal"] == 2 and info["earlier_wall_seconds"] >= 0
    assert "resumed" not in once["provenance"]
    records.validate_record(resumed)


def test_a_journal_of_another_configuration_is_refused(tmp_path, experiment):
    where = tmp_path / "j"
    journal = Journal(where, experiment.config_dict())
    job = experiment.jobs()[0]
    journal.add(job.arm.name, job.seed, _fake_result(job), "abc", "2026-12-04")
    changed = {**experiment.config_dict(), "seeds": [7]}
    assert config_hash(changed) != config_hash(experiment.config_dict())
    with pytest.raises(ValueError, match="another configuration"):
        Journal(where, changed)


def test_kept_weights_come_back_and_remove_clears_the_journal(tmp_path, experiment):
    journal = Journal(tmp_path / "j", experiment.config_dict())
    job = experiment.jobs()[0]
    state = {"w": torch.arange(6.0).reshape(2, 3)}
    journal.add(job.arm.name, job.seed, {**_fake_result(job), "model_state": state},
                None, "2026-12-04")
    back = journal.done()[(job.arm.name, job.seed)]["result"]["model_state"]
    assert torch.equal(back["w"], state["w"])
    journal.remove()
    assert not (tmp_path / "j").exists()
