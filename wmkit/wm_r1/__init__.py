"""WM-R1 (Han & Qian, 2026): a GUI agent trained with GRPO inside a world model."""
