"""``python -m depthnotes record NAME``: run a named experiment and store its record."""

from __future__ import annotations

import argparse
import tempfile

DESCRIPTION = """\
Run a named experiment (depthnotes/experiments/registry.py) in parallel worker processes, one thread
each, and write its record: notebooks/records/NAME.json, with the full configuration, the
seeds, each run's curves and final metrics, the commit, package versions, CPU and wall time.
The notebooks load it with depthnotes.experiments.records.load_record(NAME).

  python -m depthnotes record --list                 # the experiments, last run times
  python -m depthnotes record deepnorm_1000_layers   # run one, write its record
  python -m depthnotes record NAME --quick           # a tiny version, into a temp folder

Each finished run is kept at once in NAME.journal/ beside the record; run the same command
again after an interruption and only the missing runs are trained (the record says it was
resumed). The journal is removed when the record is written.
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", nargs="?", help="the experiment to run (see --list)")
    parser.add_argument("--list", action="store_true",
                        help="list the experiments with their last measured run time")
    parser.add_argument("--quick", action="store_true",
                        help="run a tiny version of the same experiment (seconds); it is "
                             "written to --out (default: a new temporary folder), never over "
                             "the real record")
    parser.add_argument("--out", metavar="DIR",
                        help="folder to write the record to (default: the repository's "
                             "notebooks/records/; with --quick, a temporary folder)")
    parser.add_argument("--workers", type=int, default=None,
                        help="worker processes (default: the cores this process may use)")


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from depthnotes.experiments.registry import EXPERIMENTS, get_experiment
    from depthnotes.experiments.journal import Journal, journal_dir
    from depthnotes.experiments.records import (REPO_RECORDS, list_experiments,
                                                run_experiment, write_record)

    if args.list:
        _print_list(list_experiments())
        return 0
    if args.name is None:
        parser.error(f"name an experiment ({', '.join(EXPERIMENTS)}) or pass --list")
    if args.name not in EXPERIMENTS:
        parser.error(f"no experiment named {args.name!r}; choose from {', '.join(EXPERIMENTS)}")
    if args.workers is not None and args.workers < 1:
        parser.error(f"--workers must be an int >= 1, got {args.workers}")
    exp = get_experiment(args.name, quick=args.quick)
    out = args.out
    if out is None and args.quick:
        out = tempfile.mkdtemp(prefix=f"{exp.name}-quick-")
    jobs = exp.jobs()
    print(f"{exp.command}: {len(exp.arms)} arms x {len(exp.seeds)} seeds = {len(jobs)} runs",
          flush=True)
    if not args.quick:
        print(_last_time(exp.name), flush=True)
    try:
        journal = Journal(journal_dir(out or REPO_RECORDS, exp.name, exp.quick),
                          exp.config_dict())
    except ValueError as e:
        parser.error(str(e))
    kept = len(journal.done(weights=False))   # run_experiment loads them
    if kept:
        print(f"resuming: {kept} of {len(jobs)} runs are in {journal.directory}", flush=True)
    record = run_experiment(exp, workers=args.workers, journal=journal)
    try:
        path = write_record(record, out)
    except ValueError as e:
        parser.error(str(e))
    journal.remove()
    prov = record["provenance"]
    print(f"wrote {path} ({prov['wall_seconds']:.0f} s wall, {prov['workers']} workers)")
    for run in record["runs"]:
        final = ", ".join(f"{k} {v}" for k, v in run["final"].items()
                          if isinstance(v, (int, float)) and not isinstance(v, bool))
        print(f"  {run['arm']}, seed {run['seed']}: {final} ({run['seconds']:.0f} s)")
    return 0


def _last_time(name: str) -> str:
    """The expected run time, from the stored record (the bar's own estimate of the time
    left appears once the first runs are done)."""
    from depthnotes.experiments.records import load_record

    try:
        prov = load_record(name).provenance
    except (FileNotFoundError, ValueError):
        return "no stored record to estimate the run time from"
    load = prov.get("load_average_before")
    at_load = f", load average {load:.1f} before it" if load is not None else ""
    return (f"the stored record took {prov['wall_seconds'] / 60:.1f} min with "
            f"{prov['workers']} workers ({prov['date']}{at_load})")


def _print_list(rows: list[dict]) -> None:
    for row in rows:
        if row["wall_seconds"] is None:
            when = "no stored record"
        else:
            when = (f"last run {row['wall_seconds'] / 60:.1f} min wall with {row['workers']} "
                    f"workers ({row['date']})")
        print(f"{row['name']}: {row['runs']} runs; {when}")
        print(f"    {row['description'].split('. ')[0]}.")
