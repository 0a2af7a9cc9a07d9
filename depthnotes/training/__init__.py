"""The one training loop, what runs it on a task or a budget family, and the runtime
(seeds, threads, progress, the machine).
"""
