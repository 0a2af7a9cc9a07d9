"""What only the book's pages use: the figure style and plots, widgets, and the numbers a
notebook hands to its prose. The only users of matplotlib, ipywidgets and myst-nb.
"""
