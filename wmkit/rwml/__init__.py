"""RWML (Yu et al., 2026): self-supervised world-model RL with an embedding-similarity reward."""
