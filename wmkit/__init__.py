"""wmkit: world models and RL for LLM agents, as notebooks a student can run.

The library holds the logic; the notebooks in ``notebooks/`` tell the story.
"""
__version__ = "0.1.0"
