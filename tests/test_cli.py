"""``python -m depthnotes <command>``: the one command-line entry, and each command on it."""

import json
import subprocess
import sys

import pytest

from depthnotes.__main__ import COMMANDS, build_parser, main


def run_cli(capsys, *argv):
    """(exit status, stdout, stderr) of ``python -m depthnotes *argv`` run in this process."""
    try:
        code = main(list(argv))
    except SystemExit as e:
        code = e.code
    out = capsys.readouterr()
    return code, out.out, out.err


# -- the dispatcher -------------------------------------------------------------------------
def test_every_command_module_follows_the_protocol():
    import importlib

    assert {"latency", "train", "khop"} <= set(COMMANDS)
    for name, (module, help_text) in COMMANDS.items():
        mod = importlib.import_module(module)
        assert module.startswith("depthnotes.cli.") and help_text
        assert isinstance(mod.DESCRIPTION, str) and mod.DESCRIPTION.strip()
        assert callable(mod.add_arguments) and callable(mod.run)
        assert f"python -m depthnotes {name}" in mod.DESCRIPTION     # its example runs


def test_help_lists_every_command(capsys):
    code, out, _ = run_cli(capsys, "--help")
    assert code == 0
    for name, (_, help_text) in COMMANDS.items():
        assert name in out and help_text in out


def test_no_command_or_an_unknown_one_is_a_usage_error(capsys):
    code, _, err = run_cli(capsys)
    assert code == 2 and "command" in err
    code, _, err = run_cli(capsys, "nope")
    assert code == 2 and "invalid choice" in err and "latency" in err


def test_python_dash_m_runs_the_entry():
    """The real entry point, in a fresh interpreter."""
    done = subprocess.run([sys.executable, "-m", "depthnotes", "--help"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "khop" in done.stdout and "latency" in done.stdout


@pytest.mark.parametrize("command, options", [
    ("latency", ("--n-layer", "--d-model", "--n-head", "--vocab-size", "--prompt-len",
                 "--new-tokens", "--repeats", "--warmup", "--batch", "--threads", "--head",
                 "--no-bandwidth", "--json")),
    ("train", ("--n-layer", "--d-model", "--n-head", "--d-ff", "--context", "--norm", "--steps",
               "--batch-size", "--lr", "--warmup-steps", "--grad-clip", "--eval-every",
               "--seed", "--threads")),
    ("khop", ("--task", "--depths", "--budget", "--steps", "--hops", "--letters", "--length",
              "--n-nodes", "--queries", "--layout", "--max-hops", "--lr", "--seed")),
])
def test_each_command_explains_each_option(capsys, command, options):
    code, out, _ = run_cli(capsys, command, "--help")
    assert code == 0 and f"python -m depthnotes {command}" in out
    for opt in options:
        assert opt in out


def test_every_option_has_help_text():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name, p in sub.choices.items():
        for action in p._actions:
            assert action.help, f"{name} {action.option_strings} has no help text"


# -- latency --------------------------------------------------------------------------------
def test_latency_prints_a_table_and_a_fit(capsys, tmp_path):
    out_json = tmp_path / "r.json"
    code, out, _ = run_cli(capsys, "latency", "--preset", "tiny", "--n-layer", "1", "2",
                           "--repeats", "1", "--new-tokens", "2", "--prompt-len", "3",
                           "--warmup", "0", "--head", "--threads", "1", "--json", str(out_json))
    assert code == 0
    assert "decode ms/step" in out and "bound ms" in out and "blocks ms" in out
    assert "fit: ms/token" in out and "fit without the head" in out
    assert "L=1: cache" in out and "one core" in out   # tiny weights: read from cache
    data = json.loads(out_json.read_text())
    assert [r["n_layer"] for r in data["results"]] == [1, 2] and data["bandwidth_gbs"] > 0
    lo, hi = data["bandwidth_range_gbs"]
    assert lo <= data["bandwidth_gbs"] <= hi and "one core" in data["bandwidth_convention"]


@pytest.mark.parametrize("argv, message", [
    (["--d-model", "100"], "d_model=100 must be divisible by n_head=12"),
    (["--n-layer", "0"], "n_layer must be an int >= 1"),
    (["--prompt-len", "0"], "--prompt-len must be >= 1"),
    (["--context", "20"], "exceeds the context of 20"),
    (["--threads", "0"], "--threads must be >= 1"),
    (["--preset", "nope"], "invalid choice"),
])
def test_latency_bad_options_are_clear_errors(capsys, argv, message):
    code, _, err = run_cli(capsys, "latency", *argv)
    assert code == 2 and message in err and "python -m depthnotes latency" in err


# -- train ----------------------------------------------------------------------------------
def test_train_prints_one_line_per_norm(capsys):
    """Chapter 5 parses these lines: '<norm> L=<depth>: ...; eval loss by step {2: ...}'."""
    code, out, _ = run_cli(capsys, "train", "--n-layer", "2", "--d-model", "16", "--d-ff", "32",
                           "--context", "8", "--steps", "4", "--eval-every", "2",
                           "--norm", "deepnorm", "post", "--threads", "1")
    assert code == 0
    lines = out.strip().splitlines()
    assert [ln.split(":")[0] for ln in lines] == ["deepnorm L=2", "post L=2"]
    assert all("trained 4 steps" in ln and "eval loss by step {2: " in ln and ", 4: " in ln
               for ln in lines)


def test_train_defaults_are_the_records_and_reproduce_its_runs(capsys):
    """The command's defaults come from the registry's deepnorm_1000_layers, and with that
    experiment's (quick) settings it prints the very losses the record's runs compute."""
    import dataclasses

    from depthnotes.cli.train import RECORD, record_defaults
    from depthnotes.experiments.registry import get_experiment
    from depthnotes.experiments.spec import run_job
    from depthnotes.training.runtime import pin

    model, tc, norms = record_defaults()
    parser = build_parser()
    args = parser.parse_args(["train"])
    assert (args.n_layer, args.d_model, args.steps, args.lr, args.context, args.norm) == \
        (model.n_layer, model.d_model, tc.steps, tc.lr, tc.context, norms)
    quick = get_experiment(RECORD, quick=True)
    r = quick.arms[0].recipe
    code, out, _ = run_cli(capsys, "train", "--n-layer", str(quick.arms[0].model.n_layer),
                           "--steps", str(r.steps), "--batch-size", str(r.batch_size),
                           "--eval-every", str(r.eval_every), "--context", str(r.context),
                           "--norm", *[a.info["norm"] for a in quick.arms])
    assert code == 0
    for job, line in zip(quick.jobs(), out.strip().splitlines()):
        # the command has no option for the number of held-out batches: the record's
        arm = dataclasses.replace(job.arm, recipe=r.replace(eval_batches=tc.eval_batches))
        pin(job.seed, threads=1)
        losses = run_job(dataclasses.replace(job, arm=arm))["curves"]["eval_loss"]
        assert line.split("eval loss by step {")[1].split("}")[0] == ", ".join(
            f"{s}: {v:.3f}" for s, v in enumerate(losses, start=r.eval_every))


@pytest.mark.parametrize("argv, message", [
    (["--n-layer", "0"], "n_layer"),
    (["--d-model", "15"], "divisible by n_head"),
    (["--steps", "0"], "steps must be an int >= 1"),
    (["--lr", "-1"], "lr must be a finite number"),
    (["--grad-clip", "-1"], "--grad-clip must be >= 0"),
    (["--threads", "0"], "--threads must be >= 1"),
    (["--norm", "rms"], "invalid choice"),
])
def test_train_bad_options_are_clear_errors(capsys, argv, message):
    code, _, err = run_cli(capsys, "train", *argv)
    assert code == 2 and message in err and "python -m depthnotes train" in err


# -- khop -----------------------------------------------------------------------------------
@pytest.mark.parametrize("task, last_k", [("table", "k=3:"), ("induction", "k=8:")])
def test_khop_prints_one_line_per_depth(capsys, task, last_k):
    """One line per depth: 'L=<L> d=<d> params=<n>: k=1: ..., k=K: ... (N steps)'."""
    code, out, _ = run_cli(capsys, "khop", "--task", task, "--steps", "2", "--depths", "1", "2")
    assert code == 0
    lines = out.strip().splitlines()
    assert [line.split()[0] for line in lines] == ["L=1", "L=2"]
    assert all("k=1:" in line and last_k in line and "(2 steps)" in line for line in lines)


@pytest.mark.parametrize("argv, message", [
    (["--steps", "0"], "--steps must be >= 1"),
    (["--lr", "0"], "--lr must be > 0"),
    (["--task", "table", "--max-hops", "0"], "max_hops must be an int >= 1"),
    (["--task", "table", "--n-nodes", "1"], "n_nodes must be an int >= 2"),
    (["--hops", "2", "1"], "hops must be increasing"),
    (["--letters", "2"], "n_symbols must be an int >= 3"),
    (["--task", "tables"], "invalid choice: 'tables'"),
    (["--depths", "400"], "no width fits depth(s) [400]"),
    (["--task", "table", "--queries", "0"], "n_queries must be an int >= 1"),
    (["--layout", "pairs"], "invalid choice: 'pairs'"),
])
def test_khop_bad_options_are_clear_errors(capsys, argv, message):
    code, _, err = run_cli(capsys, "khop", *argv)
    assert code == 2 and message in err and "python -m depthnotes khop" in err
