"""The model and everything it is made of: configuration, exact parameter counts,
initialisation, the transformer itself, its decode fast path, input checks, the line fit.
Needs only the standard library, NumPy and PyTorch.
"""
