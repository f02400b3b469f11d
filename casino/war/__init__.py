"""The War family of the source texts: classic War and its variants, pure and provably fair.

One game loop (`engine`) plays every variant; a variant is a rule set (`rules.VARIANTS`).
Like the Casino War engine beside it, nothing here does I/O, so a replay of a game runs
exactly the code that played it.
"""
