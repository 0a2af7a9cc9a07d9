"""The commands of ``python -m depthnotes <command>``, one module each.

Each module defines ``DESCRIPTION`` (its ``--help`` text), ``add_arguments(parser)`` and
``run(args, parser) -> int`` (the exit status); ``depthnotes/__main__.py`` lists them. The
science modules (``latency``, ``train``, ``tasks``, ``records``) hold no command-line code.
"""
