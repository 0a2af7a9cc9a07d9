"""Timing on a CPU: decode latency, the machine's cache and read rate, the roofline.
"""
