"""Named experiments (the registry), their records on disk, and the worker processes
that run them.
"""
