"""JSON-ready values: what results.json and run records are written from."""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np


def jsonable(value: Any) -> Any:
    """numpy arrays and scalars as plain lists and numbers, paths as strings, and non-finite
    floats as None (JSON has no NaN), recursively through dicts, lists and tuples."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, (np.floating, np.integer, np.bool_)):
        return jsonable(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Path):
        return str(value)
    return value
