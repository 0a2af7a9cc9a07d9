"""What the models train on: the shipped corpus, the synthetic tasks and their exact
baselines, and published model shapes.
"""
