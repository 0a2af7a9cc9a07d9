"""Independent trainings (seeds × configs) in worker processes, one thread each.

The book's models are small: one training uses one core well and a second thread mostly adds
synchronisation. So on a machine with several cores the fast way to run several seeds or
shapes is several processes, each with one thread. With the same seed and one thread, PyTorch
on a CPU repeats itself bit for bit across processes, so the results are *bitwise* those of
running the jobs one after another in one process (``tests/test_parallel.py`` checks it).

``run_parallel(fn, jobs)`` calls ``fn(job)`` for every job and returns the results in job
order. ``fn`` must be a module-level function of an importable module (the package's, not a
notebook's): the workers are started with ``forkserver``, which never forks the caller. Forking a
Jupyter kernel copies its threads and locks in an unknown state; the fork server is a fresh
interpreter, started once per process with the caller's ``sys.path`` (so a worker imports the
same ``depthnotes`` as the notebook, also under nbval and the book's execution script), that
imports torch and the package once and then forks a clean copy of itself per worker. That
makes a worker ready in a fraction of a second instead of the ~1 s a ``spawn`` worker spends
importing torch, which mattered: with ``spawn``, 4 seeds of a 6-second training ran only
1.63x faster on 2 cores (``benchmarks/README.md``). A *script* that calls it must do so under
``if __name__ == "__main__":``, because each worker imports the script's main module again
(as with ``spawn``), and must be a file (a script piped to ``python -`` cannot be imported
again).

Before each job the worker pins one thread and the job's seed (``runtime.pin``): the seed is
``job.seed`` (an attribute), ``job["seed"]`` (a mapping) or 0. ``workers=1`` runs the jobs in
the calling process, pinned the same way, with its thread count restored afterwards.

One progress bar counts the work across all jobs (weighted by ``costs`` when given, so the
estimate of the time left is useful when jobs differ in size); it is silent when
``DEPTHNOTES_QUIET`` is set, and the workers' own bars are always off. A job that raises
stops the others and surfaces as ``JobError`` naming the job.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool

import torch

from depthnotes.core.checks import check_int
from depthnotes.training.runtime import no_inner_progress, pin, quiet

#: The start method: workers forked from a clean server process, never from the caller.
#: Where the platform has no fork server (Windows), ``start_method`` falls back to "spawn".
START_METHOD = "forkserver"
#: What the fork server imports once, so that each forked worker starts with it loaded
#: (``torch._dynamo``: the first optimizer a process builds imports it, ~2 s per worker).
PRELOAD = ["torch", "torch._dynamo", "depthnotes.experiments.registry"]


class JobError(RuntimeError):
    """A job of ``run_parallel`` failed; the message names it and carries the worker's error."""


def start_method() -> str:
    """``START_METHOD`` where this platform has it, else "spawn" (Windows has no fork server):
    a spawned worker starts a fresh interpreter and imports the package itself, slower to
    start but computing the same bits with one thread."""
    return START_METHOD if START_METHOD in multiprocessing.get_all_start_methods() else "spawn"


def available_cores() -> int:
    """Cores this process may run on (its CPU affinity where the OS reports it)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:          # macOS, Windows
        return os.cpu_count() or 1


def job_seed(job) -> int:
    """The seed a worker pins before ``job``: ``job.seed``, ``job["seed"]`` or 0."""
    if isinstance(job, Mapping):
        seed = job.get("seed", 0)
    else:
        seed = getattr(job, "seed", 0)
    return check_int("job seed", seed, 0)


def run_parallel(fn: Callable, jobs: Sequence, *, workers: int | None = None,
                 desc: str | None = None, costs: Sequence[float] | None = None,
                 labels: Sequence[str] | None = None,
                 on_result: Callable[[int, object], None] | None = None) -> list:
    """``[fn(job) for job in jobs]``, computed in ``workers`` processes of one thread each.

    ``workers`` defaults to the cores this process may use (never more than the jobs);
    ``workers=1`` runs in this process. ``costs`` (one positive number per job, e.g. steps ×
    layers) weights the progress bar, and the workers start the costliest jobs first;
    ``labels`` name the jobs in errors (default: the job's repr); ``on_result(index,
    result)`` is called in this process as each job finishes (a record's journal keeps each
    finished run so). Raises ``JobError`` when a job fails.
    """
    jobs = list(jobs)
    if not callable(fn):
        raise TypeError(f"fn must be a function, got {type(fn).__name__}")
    if workers is None:
        workers = available_cores()
    check_int("workers", workers, 1)
    costs = [1.0] * len(jobs) if costs is None else [float(c) for c in costs]
    labels = [_short(repr(j)) for j in jobs] if labels is None else list(labels)
    for name, seq in (("costs", costs), ("labels", labels)):
        if len(seq) != len(jobs):
            raise ValueError(f"{name} must have one entry per job ({len(jobs)}), got {len(seq)}")
    if any(not c > 0 for c in costs):
        raise ValueError(f"costs must all be positive, got {costs}")
    if not jobs:
        return []
    workers = min(workers, len(jobs))
    bar = _bar(sum(costs), desc)
    try:
        if workers == 1:
            return _run_here(fn, jobs, costs, labels, bar, on_result)
        return _run_pool(fn, jobs, costs, labels, bar, workers, on_result)
    finally:
        if bar is not None:
            bar.close()


def _run_here(fn, jobs, costs, labels, bar, on_result=None) -> list:
    results = []
    before = torch.get_num_threads()
    try:
        for index, job in enumerate(jobs):
            try:
                with no_inner_progress():      # the one bar is the caller's, as in workers
                    results.append(_call(fn, job))
            except Exception as e:
                raise JobError(_failed(index, labels[index], e)) from e
            if on_result is not None:
                on_result(index, results[-1])
            if bar is not None:
                bar.update(costs[index])
    finally:
        torch.set_num_threads(before)
    return results


def _run_pool(fn, jobs, costs, labels, bar, workers, on_result=None) -> list:
    method = start_method()
    ctx = multiprocessing.get_context(method)
    if method == "forkserver":
        ctx.set_forkserver_preload(PRELOAD)    # takes effect when the server first starts
    results = [None] * len(jobs)
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx,
                             initializer=_init_worker) as pool:
        # the longest jobs first, so that the last ones to finish are short (results still
        # come back in job order)
        order = sorted(range(len(jobs)), key=lambda i: -costs[i])
        futures = {pool.submit(_call, fn, jobs[i]): i for i in order}
        pending = set(futures)
        try:
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    index = futures[fut]
                    try:
                        results[index] = fut.result()
                    except BrokenProcessPool as e:
                        raise JobError(_failed(index, labels[index], e) + " A worker process "
                                       "died: out of memory, killed, or it failed while "
                                       "starting (a script that calls run_parallel must do so "
                                       "under `if __name__ == \"__main__\":`, and be a file, "
                                       "not read from standard input)") from e
                    except Exception as e:     # its __cause__ holds the worker's traceback
                        raise JobError(_failed(index, labels[index], e)) from e
                    if on_result is not None:
                        on_result(index, results[index])
                    if bar is not None:
                        bar.update(costs[index])
        except BaseException:       # a failed job, or an interrupt (Jupyter's stop button)
            _stop_workers(pool)
            raise
    return results


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    """Cancel the jobs not started and end the running ones now: a failed or interrupted
    call must not leave workers computing for minutes in the background."""
    # The executor has no public way to stop a running job before Python 3.14
    # (``terminate_workers``); its worker processes are in ``_processes``, which ``shutdown``
    # sets to None, so they are taken first.
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()


def _init_worker() -> None:
    """Runs once in each new worker: no progress bars, one thread."""
    os.environ["DEPTHNOTES_QUIET"] = "1"
    torch.set_num_threads(1)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:            # already set (only allowed before any parallel work)
        pass


def _call(fn, job):
    """One job, pinned: one thread and the job's seed (the same in a worker and in-process)."""
    pin(job_seed(job), threads=1)
    return fn(job)


def _failed(index: int, label: str, error: BaseException) -> str:
    first = str(error.args[0]) if error.args else ""
    return f"job {index} ({label}) failed: {type(error).__name__}: {first}"


def _short(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _bar(total: float, desc: str | None):
    """One bar for all jobs (tqdm.auto: a widget in Jupyter, text elsewhere), or None. It
    shows the share of the work done and tqdm's estimate of the time left."""
    if quiet():
        return None
    from tqdm.auto import tqdm

    # mininterval=0: every finished job redraws the bar (jobs are seconds to minutes long)
    return tqdm(total=total, desc=desc, leave=False, mininterval=0,
                bar_format="{l_bar}{bar}| [{elapsed} elapsed, {remaining} left]")
