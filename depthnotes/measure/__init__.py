"""Measurements on a model: probes of the residual stream, gradients and updates,
redundancy measures, coordinate checks, and the probes a record takes.
"""
