"""Independent trainings in worker processes (depthnotes.experiments.parallel): the same bits as in turn."""

import multiprocessing
import os
import textwrap

import pytest

from depthnotes import ModelConfig
from depthnotes.experiments.spec import Arm, Job, run_job
from depthnotes.experiments.parallel import JobError, available_cores, job_seed, run_parallel
from depthnotes.training.loop import TrainConfig

TINY = TrainConfig(steps=6, batch_size=4, context=16, eval_every=3, eval_batches=1)


def tiny_jobs(seeds=(0, 1, 2), n_layer=2):
    arm = Arm("tiny", ModelConfig(n_layer=n_layer, d_model=16, n_head=2, vocab_size=94,
                                  context=16), TINY)
    wider = Arm("wider", ModelConfig(n_layer=1, d_model=32, n_head=2, vocab_size=94,
                                     context=16), TINY.replace(lr=3e-3))
    return [Job("python_topics", a, s) for a in (arm, wider) for s in seeds]


def test_workers_give_bitwise_the_results_of_one_process(tmp_path, monkeypatch):
    jobs = tiny_jobs()
    in_turn = run_parallel(run_job, jobs, workers=1)
    monkeypatch.chdir(tmp_path)            # a worker must not depend on the working directory
    parallel = run_parallel(run_job, jobs, workers=2)
    assert len(parallel) == len(jobs)
    for a, b in zip(in_turn, parallel):    # in job order, and the same floats exactly
        assert a["curves"] == b["curves"] and a["final"] == b["final"]
    # the seeds matter (so equality above is not trivial), and the order is the jobs' order
    assert in_turn[0]["curves"]["train_loss"] != in_turn[1]["curves"]["train_loss"]
    assert in_turn[:3] != in_turn[3:]


def test_in_process_run_restores_the_thread_count():
    import torch

    before = torch.get_num_threads()
    run_parallel(run_job, tiny_jobs(seeds=(0,))[:1], workers=1)
    assert torch.get_num_threads() == before


def bad_job():
    # vocab_size 10 < the corpus's 94 characters: the embedding lookup fails inside train()
    arm = Arm("too-small-vocab", ModelConfig(n_layer=1, d_model=16, n_head=2, vocab_size=10,
                                             context=16), TINY)
    return Job("python_topics", arm, 7)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_failing_job_names_itself(workers):
    jobs = tiny_jobs(seeds=(0,))[:1] + [bad_job()]
    with pytest.raises(JobError, match=r"job 1 \(too-small-vocab, seed 7\) failed: IndexError"):
        run_parallel(run_job, jobs, workers=workers, labels=["ok", "too-small-vocab, seed 7"])


def test_a_failure_stops_the_other_workers():
    """A failing job must not wait for a long sibling (minutes) to finish."""
    import time

    long = tiny_jobs(seeds=(0,))[0]
    long = Job(long.data, Arm("long", long.arm.model, TINY.replace(steps=1_000_000)), 0)
    t0 = time.perf_counter()
    before = {p.pid for p in multiprocessing.active_children()}
    with pytest.raises(JobError, match="job 1"):
        run_parallel(run_job, [long, bad_job()], workers=2)
    assert time.perf_counter() - t0 < 150      # the long job alone would take ~30 min
    # and the long job's worker is gone, not left computing in the background
    deadline = time.perf_counter() + 10
    while time.perf_counter() < deadline and any(
            p.pid not in before for p in multiprocessing.active_children()):
        time.sleep(0.1)
    assert not [p for p in multiprocessing.active_children() if p.pid not in before]


def test_arguments_are_checked():
    with pytest.raises(ValueError, match="workers must be an int >= 1"):
        run_parallel(run_job, tiny_jobs(), workers=0)
    with pytest.raises(ValueError, match=r"costs must have one entry per job \(6\)"):
        run_parallel(run_job, tiny_jobs(), costs=[1.0])
    with pytest.raises(ValueError, match="costs must all be positive"):
        run_parallel(run_job, tiny_jobs()[:1], costs=[0.0])
    with pytest.raises(TypeError, match="fn must be a function"):
        run_parallel(None, tiny_jobs())
    assert run_parallel(run_job, []) == []


def test_job_seed_and_cores():
    assert job_seed({"seed": 3}) == 3 and job_seed(tiny_jobs(seeds=(5,))[0]) == 5
    assert job_seed("no seed here") == 0
    with pytest.raises(ValueError, match="job seed"):
        job_seed({"seed": -1})
    assert 1 <= available_cores() <= (os.cpu_count() or 1)


def test_one_progress_bar_unless_quiet(monkeypatch, capsys):
    jobs = tiny_jobs(seeds=(0,))[:1]
    monkeypatch.setenv("DEPTHNOTES_QUIET", "1")
    run_parallel(run_job, jobs, workers=1, desc="tiny")
    assert capsys.readouterr().err == ""
    monkeypatch.setenv("DEPTHNOTES_QUIET", "0")
    run_parallel(run_job, jobs, workers=1, desc="tiny")
    err = capsys.readouterr().err
    assert "tiny: 100%" in err and "left]" in err and err.count("tiny: 100%") == 1


def test_runs_in_a_jupyter_kernel(tmp_path):
    """The kernel's cwd is a notebook folder; the workers are spawned from the kernel."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    code = textwrap.dedent("""
        import os
        os.environ["DEPTHNOTES_QUIET"] = "1"
        from depthnotes.experiments.parallel import run_parallel
        from depthnotes.experiments.spec import Arm, Job, run_job
        from depthnotes import ModelConfig
        from depthnotes.training.loop import TrainConfig
        tc = TrainConfig(steps=6, batch_size=4, context=16, eval_every=3, eval_batches=1)
        arm = Arm("tiny", ModelConfig(n_layer=2, d_model=16, n_head=2, vocab_size=94,
                                      context=16), tc)
        out = run_parallel(run_job, [Job("python_topics", arm, s) for s in (0, 1)], workers=2)
        print(repr([r["curves"]["eval_loss"] for r in out]))
    """)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    out = nb.cells[0].outputs
    assert [o.get("output_type") for o in out] == ["stream"], out
    expected = run_parallel(run_job, tiny_jobs(seeds=(0, 1))[:2], workers=1)
    assert out[0]["text"].strip() == repr([r["curves"]["eval_loss"] for r in expected])


def test_without_a_fork_server_workers_are_spawned(monkeypatch):
    """Windows has no fork server: run_parallel falls back to spawn and computes the same."""
    from depthnotes.experiments import parallel

    assert parallel.start_method() in multiprocessing.get_all_start_methods()
    monkeypatch.setattr(parallel.multiprocessing, "get_all_start_methods", lambda: ["spawn"])
    assert parallel.start_method() == "spawn"
    jobs = tiny_jobs(seeds=(0,))
    spawned, in_turn = (run_parallel(run_job, jobs, workers=w) for w in (2, 1))
    for a, b in zip(in_turn, spawned):     # the same floats exactly
        assert a["curves"] == b["curves"] and a["final"] == b["final"]
