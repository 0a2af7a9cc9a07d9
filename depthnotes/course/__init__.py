"""Coursework: the kinds of exercise, the check a cell calls, and what each exercise
expects.
"""
