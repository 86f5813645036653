"""What a benchmark record is keyed by: the source its experiment can run, read from the files.

A record used to be keyed by the git tree of all of ``wmkit/``, so a docstring edited anywhere
orphaned every record, and no table ever stood at one version. Now each experiment has its own key:

* its **import closure**: starting from the module of the experiment's ``run``
  (``EXPERIMENTS[name].run``: the function, or ``"module:function"``), every ``wmkit`` module it can
  import, followed recursively by reading the source with :mod:`ast`, never by importing it. Every
  ``import wmkit...``, ``from wmkit... import x`` (``x`` counts when it is a module) and relative
  import counts *wherever it stands*, inside function bodies too (most of the kit's internal imports
  are there, so what is loaded at import time is not enough), and so do the parent packages a module's
  import runs (``wmkit/__init__.py``, ``wmkit/core/__init__.py``...). A string constant that is a
  whole ``"wmkit.x.y"`` or ``"wmkit.x.y:function"`` counts too: the kit loads modules by such names
  (``wmkit.envs.ENVIRONMENTS``, a claim's precondition), and a name built at run time could not be
  followed. The closure errs on the large side: an import under ``if TYPE_CHECKING`` counts.
* the **source bytes** of each module in it, hashed (SHA-256), and the bytes of the data files the
  experiment names in ``Experiment.data`` (paths under the repository). No experiment of the kit
  reads a file under ``data/`` today (``grep`` finds no reader of the shipped ``data/*.jsonl`` in
  the experiments' code: they generate their transitions from the environments), so no key holds
  data bytes; an experiment that starts reading one must list it in ``Experiment.data``. What an
  experiment writes and reads back under ``runs/`` (a world model it builds) is made by the code
  in its closure from its config, so it is not hashed.
* except **the profiles' table of values**: ``wmkit/profiles.py`` is hashed without the lines
  between its ``# ===... the table`` and ``# ===... look-ups`` markers (:data:`VALUE_TABLES`). Every
  experiment imports it, so a size changed for one paper would otherwise orphan every paper's
  records; the values an experiment runs at are in its record's config instead (its sizes and the
  parts of the profile it reads, ``Experiment.reads``, checked while it runs).
* :data:`KEY_FORMAT`, the version of this rule and of the record layout it keys.

The key is ``src<KEY_FORMAT>-<sha256>`` over the sorted ``(module, source hash)`` pairs and
``(data path, hash)`` pairs. It needs no git: a wheel or a Colab copy of the package keys the same
bytes the same way. A record stores its pairs, so two records of different keys can say which
modules differ (:func:`module_differences`). Records of the old rule keep their names (40 hex
digits, the tree hash, maybe ``+<8 hex>``); :func:`is_source_key` tells the two apart.
"""
from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

KEY_FORMAT = 3
"""Version of the record key (1 was the git tree of ``wmkit/``; 2 hashed all of ``profiles.py``).
Bumped when the rule or the layout of a record changes: it is hashed into every key."""

VALUE_TABLES = {"wmkit.profiles": (re.compile(rb"^# =+ the table$", re.M), re.compile(rb"^# =+ look-ups$", re.M))}
"""module -> (start marker, end marker) of a table of values whose lines are left out of its hash:
they reach a record through its config (see the module docstring)."""

KEY_PREFIX = f"src{KEY_FORMAT}-"

PACKAGE = "wmkit"
PACKAGE_ROOT = Path(__file__).resolve().parent.parent.parent
"""The folder that holds the ``wmkit`` package (the repository root in a checkout, ``site-packages``
in a wheel)."""

_MODULE_STRING = re.compile(rf"{PACKAGE}(\.[A-Za-z_]\w*)+(:[A-Za-z_]\w*)?")


def is_source_key(code: str) -> bool:
    """True for a key of this rule (``src2-...``, ``src3-...``), False for a record keyed by the git tree of ``wmkit/``."""
    return code.startswith("src") and "-" in code


def module_file(module: str, root: Path = PACKAGE_ROOT) -> Path | None:
    """The file of `module` under `root` (``a/b.py`` or ``a/b/__init__.py``), None if there is none."""
    base = Path(root).joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


@functools.lru_cache(maxsize=512)
def imported_names(module: str, source: bytes, is_package: bool) -> frozenset[str]:
    """Every dotted name `source` (the text of `module`) may import from the kit, anywhere in it:
    top-level and function-level ``import``/``from ... import`` (relative ones resolved), and string
    constants that are a whole module name (``"wmkit.x"`` or ``"wmkit.x:function"``). The names
    may be attributes rather than modules; :func:`closure` keeps the modules."""
    tree = ast.parse(source)
    names: set[str] = set()
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                if node.level - 1 >= len(parts):
                    continue  # beyond the top package: not the kit's
                base = ".".join(parts[:len(parts) - (node.level - 1)])
                base = f"{base}.{node.module}" if node.module else base
            else:
                base = node.module or ""
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _MODULE_STRING.fullmatch(node.value):
            names.add(node.value.partition(":")[0])
    return frozenset(n for n in names if n == PACKAGE or n.startswith(PACKAGE + "."))


def _modules_of(name: str, root: Path) -> list[str]:
    """The kit modules that importing `name` runs: the longest prefix of `name` that is a module
    and every package above it."""
    parts = name.split(".")
    out = []
    for i in range(1, len(parts) + 1):
        prefix = ".".join(parts[:i])
        if module_file(prefix, root) is None:
            break
        out.append(prefix)
    return out


def closure(start: str | Iterable[str], root: Path = PACKAGE_ROOT,
            read: Callable[[Path], bytes] = Path.read_bytes) -> dict[str, Path]:
    """{module: file} of the kit modules reachable from `start` (a module name or several) by the
    imports :func:`imported_names` finds, recursively, with the packages above each. A start module
    outside the kit (a test's fake experiment) is read from where Python finds it and counts too."""
    starts = [start] if isinstance(start, str) else list(start)
    files: dict[str, Path] = {}
    todo: list[str] = []
    for name in starts:
        if name == PACKAGE or name.startswith(PACKAGE + "."):
            todo += _modules_of(name, root)
        else:
            spec = importlib.util.find_spec(name) if name not in sys.modules else sys.modules[name].__spec__
            if spec is None or not spec.origin or not Path(spec.origin).is_file():
                raise ValueError(f"cannot find the source of module {name!r}")
            files[name] = Path(spec.origin)
    pending = list(files.items())
    seen = set(files)
    while todo or pending:
        if todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            path = module_file(name, root)
            if path is None:
                continue
            files[name] = path
        else:
            name, path = pending.pop()
        for imported in imported_names(name, read(path), _is_package(path)):
            todo += [m for m in _modules_of(imported, root) if m not in seen]
    return dict(sorted(files.items()))


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def keyed_source(module: str, source: bytes) -> bytes:
    """The bytes of `module` that its key hashes: all of them, but for a module of
    :data:`VALUE_TABLES` the lines from its table's start marker to its end marker."""
    if module not in VALUE_TABLES:
        return source
    start, end = (marker.search(source) for marker in VALUE_TABLES[module])
    if start is None or end is None or end.start() < start.start():
        raise ValueError(f"{module}: the markers of its table of values are missing or out of order "
                         f"(wmkit.bench.source_key.VALUE_TABLES): its records could not be keyed")
    return source[:start.start()] + source[end.start():]


@dataclass(frozen=True)
class SourceKey:
    """An experiment's record key and what it hashes."""

    key: str
    """``src3-<64 hex>``: what a record's ``code`` field and file name carry."""
    modules: tuple[tuple[str, str], ...]
    """(module, SHA-256 of its source bytes), sorted by module."""
    data: tuple[tuple[str, str], ...] = ()
    """(path relative to the repository, SHA-256 of its bytes, or "missing"), sorted."""

    def module_names(self) -> list[str]:
        return [m for m, _ in self.modules]


def source_key(start: str | Iterable[str], data: Iterable[str] = (), root: Path = PACKAGE_ROOT,
               read: Callable[[Path], bytes] = Path.read_bytes) -> SourceKey:
    """The key of the source reachable from `start` (see the module docstring) and of the `data`
    files (paths relative to `root`). `read` reads a file's bytes (tests replace it)."""
    modules = tuple((name, _sha(keyed_source(name, read(path)))) for name, path in closure(start, root, read).items())
    files = []
    for rel in sorted(set(data)):
        path = Path(root) / rel
        files.append((rel, _sha(read(path)) if path.is_file() else "missing"))
    digest = hashlib.sha256(f"wmkit record key, format {KEY_FORMAT}\n".encode())
    for name, sha in modules:
        digest.update(f"module {name} {sha}\n".encode())
    for rel, sha in files:
        digest.update(f"data {rel} {sha}\n".encode())
    return SourceKey(KEY_PREFIX + digest.hexdigest(), modules, tuple(files))


def run_module(run: str | Callable) -> str:
    """The module an experiment's ``run`` lives in: ``"wmkit.x.experiment:run_x"`` -> ``wmkit.x.experiment``."""
    return run.partition(":")[0] if isinstance(run, str) else run.__module__


def module_differences(a: dict | SourceKey | Iterable, b: dict | SourceKey | Iterable) -> list[str] | None:
    """The modules (and data files, as ``data:<path>``) whose hashes differ between two keys, each
    given as a record (its ``modules``/``data`` fields), a :class:`SourceKey`, or (name, hash) pairs:
    in one only, or in both with different bytes. None when either side does not store its hashes
    (a record of the old, tree-hash rule)."""
    def pairs(x) -> dict[str, str] | None:
        if isinstance(x, SourceKey):
            return {**dict(x.modules), **{f"data:{p}": h for p, h in x.data}}
        if isinstance(x, dict):
            if not x.get("modules"):
                return None
            return {**{m: h for m, h in x["modules"]}, **{f"data:{p}": h for p, h in x.get("data") or []}}
        return dict(x)

    left, right = pairs(a), pairs(b)
    if left is None or right is None:
        return None
    return sorted(name for name in left.keys() | right.keys() if left.get(name) != right.get(name))
