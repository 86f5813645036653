"""RLVR-World (Wu et al., NeurIPS 2025): world models trained with verifiable rewards."""
