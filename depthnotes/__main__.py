"""Command line of the depthnotes package: ``python -m depthnotes <command> ...``.

Everything a reader runs from a shell goes through here; ``--help`` lists the commands and
``python -m depthnotes <command> --help`` explains each one. A thin dispatcher: each command
is a module in ``depthnotes/cli/`` with ``DESCRIPTION``, ``add_arguments(parser)`` and
``run(args, parser) -> int`` (see that package's docstring); add a command by adding one line
to ``COMMANDS``. The book's own tooling (``python -m depthnotes.tools.build`` and friends)
is not a reader's command and stays apart.

    python -m depthnotes latency --help
"""

from __future__ import annotations

import argparse
import importlib
import sys

#: command name -> (module that implements it, one-line help)
COMMANDS = {
    "latency": ("depthnotes.cli.latency", "measure per-token decode latency on this CPU"),
    "train": ("depthnotes.cli.train", "train models on the shipped corpus (chapter 5)"),
    "khop": ("depthnotes.cli.khop", "chapter 3's depth sweep on k-hop pointer chasing"),
    "record": ("depthnotes.cli.record", "run a named experiment and write its record"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m depthnotes",
        description="Commands of the Depth Notes support package; "
                    "'python -m depthnotes <command> --help' explains each.")
    sub = parser.add_subparsers(dest="command", metavar="command", required=True)
    for name, (module, help_text) in COMMANDS.items():
        mod = importlib.import_module(module)
        p = sub.add_parser(name, help=help_text, description=mod.DESCRIPTION,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run, _parser=p)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` (default: the process's arguments) and run the command; its exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    return args._run(args, args._parser)


if __name__ == "__main__":
    sys.exit(main())
