"""Command line of the depthnotes package: ``python -m depthnotes <command> ...``.

A thin dispatcher: each command is a module with ``add_arguments(parser)`` and
``run(args) -> int``; add a command by adding one line to ``COMMANDS``.

    python -m depthnotes latency --help
"""

from __future__ import annotations

import argparse
import importlib
import sys

#: command name -> (module that implements it, one-line help)
COMMANDS = {
    "latency": ("depthnotes.latency", "measure per-token decode latency on this CPU"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m depthnotes",
        description="Command-line tools of the Depth Notes support package.")
    sub = parser.add_subparsers(dest="command", metavar="command", required=True)
    for name, (module, help_text) in COMMANDS.items():
        mod = importlib.import_module(module)
        p = sub.add_parser(name, help=help_text, description=mod.DESCRIPTION,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run, _parser=p)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    return args._run(args, args._parser)


if __name__ == "__main__":
    sys.exit(main())
