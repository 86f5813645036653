"""The benchmark: the papers' claims, measured over seeds (claims.py), and its runner."""
