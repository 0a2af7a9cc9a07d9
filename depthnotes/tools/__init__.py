"""Tooling for the book itself: re-executing notebooks in place, building the site.

Run as modules, e.g. ``python -m depthnotes.tools.execute notebooks/01_parameter_math.ipynb``.
Nothing in the core package imports from here.
"""
