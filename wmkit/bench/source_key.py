"""What a benchmark record is keyed by: the code its experiment can run, read from the files.

Each experiment has its own key:

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
* the **code** of each module in it, hashed (SHA-256) as its syntax tree, not its bytes
  (:func:`canonical_code`): the tree of :func:`ast.parse` without docstrings (every statement that
  is a bare string: module, class and function docstrings, and the attribute docstrings under a
  dataclass field or a constant), without comments (the parser drops them, ``# type:`` comments
  included: they never run), without positions (line and column numbers: formatting, blank lines
  and moved code leave the tree as it is), written out field by field with empty fields left out,
  so that Python 3.11, 3.12 and 3.13 write the same tree the same way (``ast.dump`` does not: 3.12
  added ``type_params=[]`` to every function and class, 3.13 omits empty fields). A docstring,
  comment or formatting edit keeps every record; a change to what runs changes the key. What the
  tree cannot see: a module that reads its own docstrings or source while it runs (none of the
  kit's experiments does).
* the bytes of the **data files** the experiment names in ``Experiment.data`` (paths under the
  repository). No experiment of the kit reads a file under ``data/`` today (they generate their
  transitions from the environments), so no key holds data bytes; an experiment that starts
  reading one must list it in ``Experiment.data``. What an experiment writes and reads back under
  ``runs/`` (a world model it builds) is made by the code in its closure from its config, so it is
  not hashed.
* except **tables of values**: a module may hold a region of values, from a comment line
  ``# ==== values (not in record keys)`` (any number of ``=``, any words after) to a comment line
  ``# ==== end of values``, and its code is hashed without that region. Such a region holds plain
  assignments only (and their docstrings: no ``def``, ``class``, ``import`` or ``lambda``), checked
  when a key is made. Use it for the sizes an experiment runs at, which would otherwise orphan
  every record of every experiment that imports the module when one value changes: the values
  reach a record through its **config** instead (:func:`wmkit.bench.runner.experiment_config`:
  the sizes its registry entry names, and the profile parts in ``Experiment.reads``, checked while
  it runs), so a changed value gives that experiment a new config and leaves the others' records.
  A value the run reads from such a table by any other way would be in neither its key nor its
  config, so the benchmark checks, while a seed runs, that every entry it reads from a table is in
  its record's config (:func:`recording_value_reads`, :func:`wmkit.bench.runner.check_values_read`).
  ``wmkit/profiles.py`` and each paper's ``config.py`` hold one.
* :data:`KEY_FORMAT`, the version of this rule and of the record layout it keys.

The key is ``src<KEY_FORMAT>-<sha256>`` over the sorted ``(module, code hash)`` pairs and
``(data path, hash)`` pairs. It needs no git: a wheel or a Colab copy of the package keys the same
code the same way. A record stores its pairs, so two records of one key format can say which
modules differ (:func:`module_differences`), and a record's pairs can be checked against the
source of the commit that made it (:func:`module_hash` with the record's format;
:mod:`wmkit.bench.rekey` carries records across a key change that way, or by rerunning a seed).
Records of the first rule keep their names (40 hex digits, the git tree of ``wmkit/``, maybe
``+<8 hex>``); :func:`is_source_key` tells the two apart.
"""
from __future__ import annotations

import ast
import contextlib
import functools
import hashlib
import importlib
import importlib.util
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

KEY_FORMAT = 4
"""Version of the record key (1 was the git tree of ``wmkit/``; 2 hashed each module's bytes; 3 its
bytes without ``profiles.py``'s table; 4 its syntax tree without docstrings, comments and tables of
values). Bumped when the rule or the layout of a record changes: it is hashed into every key."""

KEY_PREFIX = f"src{KEY_FORMAT}-"

VALUES_START = re.compile(rb"^# =+ values \(not in record keys\)[^\n]*$", re.MULTILINE)
VALUES_END = re.compile(rb"^# =+ end of values[^\n]*$", re.MULTILINE)
"""The comment lines that open and close a table of values left out of a module's hash (see the
module docstring)."""

LEGACY_VALUE_TABLES = {"wmkit.profiles": (re.compile(rb"^# =+ the table$", re.MULTILINE), re.compile(rb"^# =+ look-ups$", re.MULTILINE))}
"""Key format 3's one table of values, ``profiles.py`` between these markers: key format 3 left it out
of its hash, and format 4 leaves it out of a ``profiles.py`` that has no ``# ==== values`` markers yet
(a file of a commit from before them), so an older commit's code hashes as today's would."""

PACKAGE = "wmkit"
PACKAGE_ROOT = Path(__file__).resolve().parent.parent.parent
"""The folder that holds the ``wmkit`` package (the repository root in a checkout, ``site-packages``
in a wheel)."""

_MODULE_STRING = re.compile(rf"{PACKAGE}(\.[A-Za-z_]\w*)+(:[A-Za-z_]\w*)?")


def is_source_key(code: str) -> bool:
    """True for a key of this rule (``src2-...`` .. ``src4-...``), False for a record keyed by the git tree of ``wmkit/``."""
    return code.startswith("src") and "-" in code


def key_format(code: str) -> int | None:
    """The key format of a record's `code` (``src4-...`` -> 4; a git tree hash -> 1), None if it is neither."""
    if is_source_key(code):
        digits = code.partition("-")[0][3:]
        return int(digits) if digits.isdigit() else None
    return 1 if re.fullmatch(r"[0-9a-f]{40}(\+[0-9a-f]{8})?", code) else None


def module_file(module: str, root: Path = PACKAGE_ROOT) -> Path | None:
    """The file of `module` under `root` (``a/b.py`` or ``a/b/__init__.py``), None if there is none."""
    base = Path(root).joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


# ---------------------------------------------------------------------------- the code of a module

def _is_bare_string(statement: ast.stmt) -> bool:
    return (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
            and isinstance(statement.value.value, str))


def strip_docstrings(tree: ast.Module) -> ast.Module:
    """`tree` without its bare string statements, in place: docstrings of the module, its classes
    and functions, and the attribute docstrings under assignments. A string that stands alone as a
    statement is never run (CPython compiles it to nothing)."""
    tree.body = _without_strings(tree.body)
    return tree


def _without_strings(statements: list[ast.stmt]) -> list[ast.stmt]:
    """`statements` without bare strings, and so on down every block nested in them (statements
    sit only in other statements' blocks: bodies, else and finally blocks, handlers, match cases)."""
    kept = [s for s in statements if not _is_bare_string(s)]
    for statement in kept:
        for field in ("body", "orelse", "finalbody"):
            block = getattr(statement, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                setattr(statement, field, _without_strings(block))
        for part in (*getattr(statement, "handlers", ()), *getattr(statement, "cases", ())):
            part.body = _without_strings(part.body)
    return kept


def _dump(node) -> str:
    """`node` written out field by field, without positions, empty fields (None, []), a string's
    ``u`` prefix (``kind``) or type comments: the same text on every Python from 3.11 on."""
    if isinstance(node, ast.AST):
        fields = []
        for name in node._fields:
            if name in ("kind", "type_comment"):
                continue
            value = getattr(node, name, None)
            if value is None or (isinstance(value, list) and not value):
                continue
            fields.append(f"{name}={_dump(value)}")
        return f"{type(node).__name__}({', '.join(fields)})"
    if isinstance(node, list):
        return "[" + ", ".join(_dump(v) for v in node) + "]"
    return repr(node)


def _value_regions(module: str, source: bytes) -> list[tuple[int, int]]:
    """The (start, end) byte offsets of `module`'s tables of values, each checked: markers paired
    and in order, the region whole statements that are assignments (see the module docstring)."""
    starts = [m.start() for m in VALUES_START.finditer(source)]
    ends = [m.start() for m in VALUES_END.finditer(source)]
    if not starts and not ends and module in LEGACY_VALUE_TABLES:  # a file from before these markers
        starts, ends = ([m.start() for m in marker.finditer(source)][:1] for marker in LEGACY_VALUE_TABLES[module])
    problem = None
    if len(starts) != len(ends):
        problem = f"{len(starts)} '# ==== values (not in record keys)' line(s) and {len(ends)} '# ==== end of values'"
    elif any(not s < e for s, e in zip(starts, ends)) or any(e > s for e, s in zip(ends, starts[1:])):
        problem = "its values markers are out of order (each region opens before it closes, regions do not nest)"
    regions = list(zip(starts, ends))
    for start, end in regions if problem is None else []:
        try:
            statements = ast.parse(source[start:end]).body
        except SyntaxError as err:
            problem = f"a table of values must hold whole statements ({err.msg}, line {err.lineno} of the region)"
            break
        for statement in statements:
            if not isinstance(statement, ast.Assign | ast.AnnAssign) and not _is_bare_string(statement):
                problem = (f"a table of values holds assignments only, not a {type(statement).__name__} "
                           f"(line {statement.lineno} of the region): code there would run unkeyed")
            elif any(isinstance(n, ast.Lambda | ast.NamedExpr) for n in ast.walk(statement)):
                problem = f"a table of values holds no lambda or ':=' (line {statement.lineno} of the region)"
            if problem:
                break
        if problem:
            break
    if problem:
        raise ValueError(f"{module}: {problem}; its records could not be keyed (wmkit.bench.source_key)")
    return regions


def without_values(module: str, source: bytes) -> bytes:
    """`source` without its tables of values (the lines from each ``# ==== values (not in record
    keys)`` line up to its ``# ==== end of values`` line)."""
    kept, last = [], 0
    for start, end in _value_regions(module, source):
        kept.append(source[last:start])
        last = end
    return b"".join(kept) + source[last:]


def table_names(module: str, source: bytes) -> list[str]:
    """The names `module`'s tables of values assign at top level (``RLVR``, ``BENCH_RLVR``...)."""
    names = []
    for start, end in _value_regions(module, source):
        for statement in ast.parse(source[start:end]).body:
            targets = statement.targets if isinstance(statement, ast.Assign) else [getattr(statement, "target", None)]
            names += [t.id for t in targets if isinstance(t, ast.Name) and t.id not in names]
    return names


@functools.lru_cache(maxsize=4)
def tables_of_values(root: Path = PACKAGE_ROOT) -> tuple[tuple[str, str], ...]:
    """(module, name) of every table of values in the ``wmkit`` package under `root`."""
    out = []
    for path in sorted((Path(root) / PACKAGE).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        source = path.read_bytes()
        if VALUES_START.search(source) or module in LEGACY_VALUE_TABLES:
            out += [(module, name) for name in table_names(module, source)]
    return tuple(out)


class RecordedTable(dict):
    """A table of values (a dict) that notes each entry read from it into `reads`:
    ``(module.name, key, value)``. Iterating over it reads every entry."""

    def __init__(self, where: str, table: dict, reads: list):
        super().__init__(table)
        self.where, self.reads = where, reads

    def __getitem__(self, key):
        value = super().__getitem__(key)
        self.reads.append((self.where, key, value))
        return value

    def get(self, key, default=None):
        if key in self:
            return self[key]
        return default

    def values(self):
        return [self[k] for k in self]

    def items(self):
        return [(k, self[k]) for k in self]


@contextlib.contextmanager
def recording_value_reads(tables: Iterable[tuple[str, str]] | None = None):
    """While inside: every table of values that is a dict (:func:`tables_of_values`, or `tables`) is
    replaced in its module by a :class:`RecordedTable`, so that a function reading an entry by the
    table's name notes it; yields the list of ``(table, key, value)`` read. The tables are put back on
    leaving. What it cannot see: a read in another process, a table bound to another name at import
    time (``from m import TABLE`` elsewhere), a table that is not a dict (``tests/test_config_keys.py``
    checks that no function reads one of these ways)."""
    reads: list = []
    installed = []
    try:
        tables = list(tables_of_values() if tables is None else tables)
        modules = {module: importlib.import_module(module) for module, _ in tables}  # all before any swap:
        for module, name in tables:  # a table another table module imports at import time stays a dict
            held = modules[module]
            table = getattr(held, name, None)
            if isinstance(table, dict) and not isinstance(table, RecordedTable):
                setattr(held, name, RecordedTable(f"{module}.{name}", table, reads))
                installed.append((held, name, table))
        yield reads
    finally:
        for held, name, table in installed:
            setattr(held, name, table)


@functools.lru_cache(maxsize=512)
def _parsed(source: bytes) -> ast.Module:
    """The syntax tree of `source` without docstrings (shared, never changed after this)."""
    return strip_docstrings(ast.parse(source, type_comments=False))


@functools.lru_cache(maxsize=512)
def canonical_code(module: str, source: bytes) -> str:
    """What `module`'s hash covers: the syntax tree of `source` without its tables of values, its
    docstrings, comments and positions, written out by :func:`_dump`."""
    try:
        return _dump(_parsed(without_values(module, source)))
    except SyntaxError as err:
        raise ValueError(f"{module}: cannot parse its source to key it ({err.msg}, line {err.lineno})") from err


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _legacy_cut(module: str, source: bytes) -> bytes:
    if module not in LEGACY_VALUE_TABLES:
        return source
    start, end = (marker.search(source) for marker in LEGACY_VALUE_TABLES[module])
    if start is None or end is None or end.start() < start.start():
        raise ValueError(f"{module}: no format-3 table markers in this source")
    return source[:start.start()] + source[end.start():]


def module_hash(module: str, source: bytes, key_format: int = KEY_FORMAT) -> str:
    """SHA-256 of `module`'s `source` as keys of `key_format` hash it: 4, its code
    (:func:`canonical_code`); 3, its bytes without ``profiles.py``'s table (format 3's markers);
    2, its bytes."""
    if key_format == KEY_FORMAT:
        return _sha(canonical_code(module, source).encode())
    if key_format == 3:
        return _sha(_legacy_cut(module, source))
    if key_format == 2:
        return _sha(source)
    raise ValueError(f"no module hash of key format {key_format} (known: 2, 3, {KEY_FORMAT})")


def key_of(modules: Iterable[tuple[str, str]], data: Iterable[tuple[str, str]] = (),
           key_format: int = KEY_FORMAT) -> str:
    """The key (``src<format>-<sha256>``) of sorted (module, hash) and (data path, hash) pairs: how
    formats 2 and later digest them."""
    digest = hashlib.sha256(f"wmkit record key, format {key_format}\n".encode())
    for name, sha in modules:
        digest.update(f"module {name} {sha}\n".encode())
    for rel, sha in data:
        digest.update(f"data {rel} {sha}\n".encode())
    return f"src{key_format}-{digest.hexdigest()}"


# ---------------------------------------------------------------------------- the closure

@functools.lru_cache(maxsize=512)
def imported_names(module: str, source: bytes, is_package: bool) -> frozenset[str]:
    """Every dotted name `source` (the text of `module`) may import from the kit, anywhere in it:
    top-level and function-level ``import``/``from ... import`` (relative ones resolved), and string
    constants that are a whole module name (``"wmkit.x"`` or ``"wmkit.x:function"``; not in a
    docstring, which never runs). The names may be attributes rather than modules; :func:`closure`
    keeps the modules."""
    tree = _parsed(source)
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


@dataclass(frozen=True)
class SourceKey:
    """An experiment's record key and what it hashes."""

    key: str
    """``src4-<64 hex>``: what a record's ``code`` field and file name carry."""
    modules: tuple[tuple[str, str], ...]
    """(module, SHA-256 of its code, :func:`module_hash`), sorted by module."""
    data: tuple[tuple[str, str], ...] = ()
    """(path relative to the repository, SHA-256 of its bytes, or "missing"), sorted."""

    def module_names(self) -> list[str]:
        return [m for m, _ in self.modules]

    @property
    def key_format(self) -> int | None:
        return key_format(self.key)


def data_hashes(data: Iterable[str], root: Path = PACKAGE_ROOT,
                read: Callable[[Path], bytes] = Path.read_bytes) -> tuple[tuple[str, str], ...]:
    """(path, SHA-256 of its bytes or "missing") of each data file (paths relative to `root`), sorted."""
    files = []
    for rel in sorted(set(data)):
        path = Path(root) / rel
        files.append((rel, _sha(read(path)) if path.is_file() else "missing"))
    return tuple(files)


def source_key(start: str | Iterable[str], data: Iterable[str] = (), root: Path = PACKAGE_ROOT,
               read: Callable[[Path], bytes] = Path.read_bytes) -> SourceKey:
    """The key of the code reachable from `start` (see the module docstring) and of the `data`
    files (paths relative to `root`). `read` reads a file's bytes (tests replace it)."""
    modules = tuple((name, module_hash(name, read(path))) for name, path in closure(start, root, read).items())
    files = data_hashes(data, root, read)
    return SourceKey(key_of(modules, files), modules, files)


def run_module(run: str | Callable) -> str:
    """The module an experiment's ``run`` lives in: ``"wmkit.x.experiment:run_x"`` -> ``wmkit.x.experiment``."""
    return run.partition(":")[0] if isinstance(run, str) else run.__module__


def module_differences(a: dict | SourceKey | Iterable, b: dict | SourceKey | Iterable) -> list[str] | None:
    """The modules (and data files, as ``data:<path>``) whose hashes differ between two keys, each
    given as a record (its ``modules``/``data`` fields), a :class:`SourceKey`, or (name, hash) pairs:
    in one only, or in both with different code. None when either side does not store its hashes
    (a record of the old, tree-hash rule) or the two are of different key formats (their hashes
    are not comparable)."""
    def pairs(x) -> tuple[dict[str, str] | None, int | None]:
        if isinstance(x, SourceKey):
            return {**dict(x.modules), **{f"data:{p}": h for p, h in x.data}}, x.key_format
        if isinstance(x, dict):
            if not x.get("modules"):
                return None, None
            return ({**{m: h for m, h in x["modules"]}, **{f"data:{p}": h for p, h in x.get("data") or []}},
                    x.get("key_format") or key_format(x.get("code", "")))
        return dict(x), None

    (left, left_format), (right, right_format) = pairs(a), pairs(b)
    if left is None or right is None or (left_format and right_format and left_format != right_format):
        return None
    return sorted(name for name in left.keys() | right.keys() if left.get(name) != right.get(name))
