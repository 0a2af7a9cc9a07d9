"""Loaded by pytest for this repository (``-p`` in pyproject.toml).

Sets ``DEPTHNOTES_QUIET`` before any test or notebook kernel starts, so progress bars stay out
of the outputs nbval compares, however pytest is invoked (whole suite or one notebook).
"""

import os

os.environ["DEPTHNOTES_QUIET"] = "1"

# Record each notebook's checked run time and versions for the book's status page, and run the
# browser test last (after the notebooks): see depthnotes/tools/status.py.
from depthnotes.tools.status import (  # noqa: E402,F401
    pytest_collection_finish, pytest_collection_modifyitems, pytest_configure,
    pytest_itemcollected, pytest_runtest_logreport)
