"""The evidence library every verdict uses, and one small module of rules per chapter.
"""
