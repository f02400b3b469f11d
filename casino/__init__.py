"""The game of Casino War: pure, deterministic, free of I/O.

Everything here is a function of its arguments, so the replay of a hand runs exactly the
code that dealt it.
"""
