"""Research tasks with real execution: the agent proposes an experiment, the kit runs it for real.

This is the environment of WMRL (notebook 04). A *task* is a dataset that ships with
scikit-learn (digits, breast_cancer, wine, iris). The agent's action is a small
**experiment config written as JSON text**, for example::

    {"model": "svm", "scaler": "standard", "C": 10.0, "gamma": "scale"}

*Real execution* parses the text (JSON only — agent text is data, never code), checks
every key and bound, then trains and scores the experiment in a **sandbox**: a separate
server process that forks one child per experiment, with a CPU-time limit (CPU seconds, not
wall time: a grade must not depend on how busy the machine is), a generous wall-clock safety
net and an address-space (memory) limit. What the child can build is
fixed by a whitelist of scikit-learn estimators; nothing the agent writes is ever
evaluated, imported or passed to a shell.

The grade follows WMRL's scale for research tasks (the official grader):

======  =============================================================================
0.0     invalid: not JSON, truncated, unknown keys, a value out of bounds
0.1     runtime error: the fit raised, ran out of memory, or hit the CPU-time limit
0.2     ran without a valid result: the predictions are not class labels (a regressor)
0.5+    valid: ``0.5 + 0.5·percentile`` of its test accuracy among a reference pool of
        configs for that dataset (mid-rank for ties)
======  =============================================================================

Execution is deterministic (a fixed stratified 50/50 split and ``random_state=0``), so
results are cached. **Cost accounting** (:class:`CostLedger`) charges every execution
its measured CPU seconds *as if it had run*, even when served from the cache; the
reference pool and anything a world model is built from are charged as well. Beside the
seconds it counts **work** in execution units (one per execution, :data:`PREDICTION_WORK`
per world-model query), a count that, unlike a timing, is the same in every same-seed run.

The sandbox uses ``os.fork`` and ``resource`` (POSIX: Linux, macOS, Colab). On macOS the
memory limit (``RLIMIT_AS``) is not enforced by the kernel; the CPU-time limit is.
"""
from __future__ import annotations

import json
import math
import os
import select
import signal
import subprocess
import sys
import time
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "DATASETS",
    "GRADE_INVALID",
    "GRADE_NO_RESULT",
    "GRADE_RUNTIME_ERROR",
    "RESEARCH_SPACE",
    "CostLedger",
    "ExecutionResult",
    "Head",
    "ResearchEnv",
    "Sandbox",
    "Space",
    "dataset_meta_features",
    "grade",
    "parse_experiment",
    "percentile",
    "run_experiment",
]

GRADE_INVALID = 0.0
GRADE_RUNTIME_ERROR = 0.1
GRADE_NO_RESULT = 0.2
MAX_CONFIG_CHARS = 2000
"""Longer agent output is rejected before parsing (and counts as invalid)."""

DATASETS = ("digits", "breast_cancer", "wine", "iris")
"""Datasets that ship inside scikit-learn (no download)."""

# Statuses a sandboxed run can end with, and the grade each one earns.
RUNTIME_STATUSES = ("runtime_error", "timeout", "memory", "crashed")


# ----------------------------------------------------------------------------- space


@dataclass(frozen=True)
class Head:
    """One factor of a config: a JSON key and the values a policy may choose for it."""

    name: str
    """Unique name, e.g. ``"svm.C"``."""
    key: str
    """The JSON key it writes, e.g. ``"C"``."""
    options: tuple
    """The values on offer (a policy picks one index)."""
    active_when: tuple[str, Any] | None = None
    """``(head name, value)``: only part of the config when that head chose that value."""


@dataclass(frozen=True)
class Space:
    """A factorised discrete action space: the configs a policy can write.

    A config is represented inside the loop as a tuple of option indices, one per head,
    with ``-1`` for a head that is not active (e.g. ``n_neighbors`` when the model is not
    kNN). :meth:`to_config` turns it into the JSON-ready dict the agent writes.
    """

    heads: tuple[Head, ...]

    def __post_init__(self) -> None:
        names = [h.name for h in self.heads]
        if len(set(names)) != len(names):
            raise ValueError("head names must be unique")
        for i, head in enumerate(self.heads):
            if head.active_when is not None:
                parent = names.index(head.active_when[0])
                if parent >= i:
                    raise ValueError(f"head {head.name} must come after its parent {head.active_when[0]}")

    @property
    def names(self) -> list[str]:
        return [h.name for h in self.heads]

    def active(self, choice: tuple[int, ...], head_index: int) -> bool:
        """Whether head ``head_index`` is part of a config whose earlier heads chose ``choice``."""
        condition = self.heads[head_index].active_when
        if condition is None:
            return True
        parent = self.names.index(condition[0])
        return choice[parent] >= 0 and self.heads[parent].options[choice[parent]] == condition[1]

    def enumerate(self) -> list[tuple[int, ...]]:
        """Every config of the space, in a fixed order (inactive heads are -1)."""
        configs: list[tuple[int, ...]] = [()]
        for i, head in enumerate(self.heads):
            grown = []
            for partial in configs:
                padded = partial + (-1,) * (len(self.heads) - len(partial))
                if self.active(padded, i):
                    grown.extend(partial + (k,) for k in range(len(head.options)))
                else:
                    grown.append(partial + (-1,))
            configs = grown
        return configs

    def to_config(self, choice: tuple[int, ...]) -> dict[str, Any]:
        """The JSON-ready dict for a tuple of option indices."""
        return {h.key: h.options[k] for h, k in zip(self.heads, choice) if k >= 0}

    def render(self, choice: tuple[int, ...]) -> str:
        """The agent's output text for a config (canonical JSON)."""
        return json.dumps(self.to_config(choice), sort_keys=True)


def _research_space() -> Space:
    def when(model: str) -> tuple[str, str]:
        return ("model", model)

    return Space(heads=(
        Head("scaler", "scaler", ("none", "standard", "minmax")),
        Head("model", "model", ("logistic_regression", "knn", "decision_tree", "random_forest", "svm",
                                "naive_bayes", "mlp", "ridge_regression")),
        Head("logistic_regression.C", "C", (0.01, 1.0, 100.0), when("logistic_regression")),
        # 0 neighbours / depth 0 are out of bounds on purpose: agents do propose invalid values.
        Head("knn.n_neighbors", "n_neighbors", (0, 1, 5, 25), when("knn")),
        Head("decision_tree.max_depth", "max_depth", (0, 2, 6, None), when("decision_tree")),
        Head("random_forest.n_estimators", "n_estimators", (10, 100), when("random_forest")),
        Head("random_forest.max_depth", "max_depth", (3, None), when("random_forest")),
        Head("svm.C", "C", (0.1, 10.0, 1000.0), when("svm")),
        Head("svm.gamma", "gamma", ("scale", 0.1), when("svm")),
        Head("naive_bayes.variant", "variant", ("gaussian", "multinomial"), when("naive_bayes")),
        Head("mlp.hidden_units", "hidden_units", (16, 128), when("mlp")),
        Head("mlp.max_iter", "max_iter", (30, 500), when("mlp")),
        Head("ridge_regression.alpha", "alpha", (1.0,), when("ridge_regression")),
    ))


RESEARCH_SPACE = _research_space()
"""The configs the kit's policy can write: 84 per dataset (3 scalers × 28 model settings)."""


# ---------------------------------------------------------------- parse and validate

# Every hyperparameter the sandbox accepts, with its type and bounds. A value of None is
# allowed only where listed ("no depth limit").
_FLOAT, _INT, _CHOICE = "float", "int", "choice"
HYPERPARAMETERS: dict[str, dict[str, tuple]] = {
    "logistic_regression": {"C": (_FLOAT, 1e-4, 1e4), "max_iter": (_INT, 10, 1000)},
    "knn": {"n_neighbors": (_INT, 1, 200), "weights": (_CHOICE, ("uniform", "distance"))},
    "decision_tree": {"max_depth": (_INT, 1, 64, "none_ok"), "criterion": (_CHOICE, ("gini", "entropy"))},
    "random_forest": {"n_estimators": (_INT, 1, 300), "max_depth": (_INT, 1, 64, "none_ok")},
    "svm": {"C": (_FLOAT, 1e-4, 1e4), "gamma": (_FLOAT, 1e-5, 1e2, "scale_ok")},
    "naive_bayes": {"variant": (_CHOICE, ("gaussian", "multinomial"))},
    "mlp": {"hidden_units": (_INT, 1, 512), "max_iter": (_INT, 1, 2000), "alpha": (_FLOAT, 1e-6, 1.0)},
    "ridge_regression": {"alpha": (_FLOAT, 1e-4, 1e4)},
}
SCALERS = ("none", "standard", "minmax")


def _reject_constant(name: str):
    raise ValueError(f"{name} is not allowed")


def parse_experiment(text: Any) -> tuple[dict[str, Any] | None, str | None]:
    """Parse and validate agent output. Returns ``(config, None)`` or ``(None, reason)``.

    Only ``json.loads`` ever looks at the text (NaN/Infinity rejected, at most
    ``MAX_CONFIG_CHARS`` characters); the result must be an object with a known
    ``"model"``, an optional ``"scaler"`` and only that model's hyperparameters, each of
    the right type and within bounds. Never raises, whatever it is given.
    """
    if not isinstance(text, str):
        return None, f"expected text, got {type(text).__name__}"
    if len(text) > MAX_CONFIG_CHARS:
        return None, f"longer than {MAX_CONFIG_CHARS} characters"
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as err:
        return None, f"syntax error or truncated JSON: {str(err)[:80]}"
    if not isinstance(data, dict):
        return None, "the config must be a JSON object"
    model = data.get("model")
    if not isinstance(model, str) or model not in HYPERPARAMETERS:
        return None, f"unknown model {model!r}"
    scaler = data.get("scaler", "none")
    if scaler not in SCALERS:
        return None, f"unknown scaler {scaler!r}"
    config: dict[str, Any] = {"model": model, "scaler": scaler}
    allowed = HYPERPARAMETERS[model]
    for key, value in data.items():
        if key in ("model", "scaler"):
            continue
        if key not in allowed:
            return None, f"{model} has no hyperparameter {key!r}"
        ok, reason = _check_value(value, allowed[key])
        if not ok:
            return None, f"{key}: {reason}"
        config[key] = value
    return config, None


def _check_value(value: Any, spec: tuple) -> tuple[bool, str]:
    kind = spec[0]
    flags = spec[3:] if kind in (_FLOAT, _INT) else ()
    if value is None:
        return ("none_ok" in flags), "null is not allowed here"
    if kind == _CHOICE:
        return value in spec[1], f"must be one of {list(spec[1])}"
    if isinstance(value, str):
        return (value == "scale" and "scale_ok" in flags), "must be a number"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False, "must be a number"
    # No float(value): JSON integers have any number of digits and float() of a 400-digit one
    # raises OverflowError. Python compares int with float exactly, so the bounds need no
    # conversion; a float is already a float (1e400 parses to inf, NaN is rejected by json.loads).
    if isinstance(value, float) and not math.isfinite(value):
        return False, "must be a finite number"
    if kind == _INT and not (isinstance(value, int) or value.is_integer()):
        return False, "must be an integer"
    low, high = spec[1], spec[2]
    if not low <= value <= high:
        return False, f"must be within [{low}, {high}]"
    return True, ""


# ------------------------------------------------------------------ the experiment


_DATA_CACHE: dict[str, tuple] = {}


def load_split(dataset: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The fixed stratified 50/50 split of a scikit-learn dataset: X_train, X_test, y_train, y_test."""
    if dataset not in DATASETS:
        raise ValueError(f"Unknown dataset {dataset!r}: choose one of {', '.join(DATASETS)}")
    if dataset not in _DATA_CACHE:
        from sklearn import datasets as skdatasets
        from sklearn.model_selection import train_test_split

        X, y = getattr(skdatasets, f"load_{dataset}")(return_X_y=True)
        _DATA_CACHE[dataset] = tuple(train_test_split(X, y, test_size=0.5, random_state=0, stratify=y))
    return _DATA_CACHE[dataset]


def dataset_meta_features(dataset: str) -> np.ndarray:
    """What a world model may know about a dataset without running anything on it.

    log10 of training size and feature count, the class count, and log10 of the ratio of
    the largest to the smallest feature standard deviation (how much scaling matters).
    """
    X_train, _, y_train, _ = load_split(dataset)
    std = X_train.std(axis=0)
    std = std[std > 0]
    return np.array([math.log10(len(X_train)), math.log10(X_train.shape[1]), len(np.unique(y_train)),
                     math.log10(std.max() / std.min())])


def _build_estimator(config: dict[str, Any]):
    """The whitelisted scikit-learn pipeline for a *validated* config."""
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.naive_bayes import GaussianNB, MultinomialNB
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MinMaxScaler, StandardScaler
    from sklearn.svm import SVC
    from sklearn.tree import DecisionTreeClassifier

    p = config
    model = p["model"]
    if model == "logistic_regression":
        estimator = LogisticRegression(C=p.get("C", 1.0), max_iter=int(p.get("max_iter", 200)))
    elif model == "knn":
        estimator = KNeighborsClassifier(n_neighbors=int(p.get("n_neighbors", 5)), weights=p.get("weights", "uniform"))
    elif model == "decision_tree":
        depth = p.get("max_depth")
        estimator = DecisionTreeClassifier(max_depth=None if depth is None else int(depth),
                                           criterion=p.get("criterion", "gini"), random_state=0)
    elif model == "random_forest":
        depth = p.get("max_depth")
        estimator = RandomForestClassifier(n_estimators=int(p.get("n_estimators", 100)),
                                           max_depth=None if depth is None else int(depth), random_state=0, n_jobs=1)
    elif model == "svm":
        estimator = SVC(C=p.get("C", 1.0), gamma=p.get("gamma", "scale"))
    elif model == "naive_bayes":
        estimator = MultinomialNB() if p.get("variant", "gaussian") == "multinomial" else GaussianNB()
    elif model == "mlp":
        estimator = MLPClassifier(hidden_layer_sizes=(int(p.get("hidden_units", 64)),),
                                  max_iter=int(p.get("max_iter", 200)), alpha=p.get("alpha", 1e-4), random_state=0)
    elif model == "ridge_regression":
        estimator = Ridge(alpha=p.get("alpha", 1.0))
    else:  # unreachable after parse_experiment
        raise ValueError(f"unknown model {model!r}")
    scaler = {"none": None, "standard": StandardScaler(), "minmax": MinMaxScaler()}[p.get("scaler", "none")]
    return estimator if scaler is None else make_pipeline(scaler, estimator)


def run_experiment(dataset: str, config_text: str) -> dict[str, Any]:
    """Train and score one experiment *in this process* (the sandbox child calls it).

    Returns ``{"status": ..., "score": accuracy or None, "detail": ...}``. Status ``ok``
    needs predictions that are valid class labels; a model that predicts anything else
    (a regressor's real numbers) ran "without a valid result". Exceptions from the fit
    become ``runtime_error`` (``memory`` for MemoryError); they are not raised.
    """
    config, reason = parse_experiment(config_text)  # again: the child trusts nothing
    if config is None:
        return {"status": "invalid", "score": None, "detail": reason}
    X_train, X_test, y_train, y_test = load_split(dataset)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            estimator = _build_estimator(config)
            estimator.fit(X_train, y_train)
            predictions = np.asarray(estimator.predict(X_test))
    except MemoryError:
        return {"status": "memory", "score": None, "detail": "MemoryError"}
    except Exception as err:  # noqa: BLE001 - any failure of the experiment is its outcome
        return {"status": "runtime_error", "score": None, "detail": f"{type(err).__name__}: {str(err)[:160]}"}
    labels = set(np.unique(y_train).tolist())
    valid = (predictions.shape == y_test.shape and np.all(np.isfinite(predictions.astype(float)))
             and set(np.unique(predictions).tolist()) <= labels)
    if not valid:
        return {"status": "no_result", "score": None, "detail": "predictions are not class labels"}
    return {"status": "ok", "score": float(np.mean(predictions == y_test)), "detail": ""}


# ------------------------------------------------------------------------ sandbox


@dataclass(frozen=True)
class ExecutionResult:
    """What one real execution produced and what it cost."""

    status: str
    """ok, no_result, runtime_error, timeout, memory, crashed or invalid."""
    score: float | None
    """Test accuracy when status is ok, else None."""
    cpu_s: float
    """Measured CPU seconds of the sandboxed child (user + system), fork and exit included."""
    wall_s: float
    """Wall-clock seconds the sandbox waited."""
    detail: str = ""
    """Why it failed, when it did."""


def _vm_bytes() -> int | None:
    """This process's current virtual memory size (Linux), or None where unknown."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _allocate(megabytes: float) -> dict[str, Any]:
    """The sandbox's self-test job: allocate and touch ``megabytes`` of memory."""
    block = np.ones(int(megabytes * 2**20 / 8))
    return {"status": "ok", "score": None, "detail": f"allocated {block.nbytes / 2**20:.0f} MB"}


WALL_SAFETY_FACTOR = 10.0
WALL_SAFETY_MIN_S = 60.0
"""The wall-clock safety net of one execution: max(60 s, 10 × its CPU limit). It only catches a child
that stops using CPU without finishing (it never bites on a fit that computes, however loaded the
machine): the limit that decides an experiment's grade is its CPU time, not the wall clock."""


def wall_safety_s(cpu_limit_s: float) -> float:
    return max(WALL_SAFETY_MIN_S, WALL_SAFETY_FACTOR * cpu_limit_s)


def _run_forked(dataset: str, config_text: str, cpu_limit_s: float, memory_mb: float,
                allocate_mb: float | None = None) -> dict[str, Any]:
    """Run one experiment in a forked child with limits; return its result and its CPU seconds.

    The child sets an address-space limit of (its current size + ``memory_mb``) and a CPU-time
    limit of ``cpu_limit_s`` (``ITIMER_PROF``: the kernel ends the child with SIGPROF once it has
    used that much CPU), runs :func:`run_experiment` and writes one JSON line to a pipe.

    Why CPU time and not wall time: a single-threaded fit's CPU time hardly moves with the
    machine's load, its wall time does, so a wall-clock limit would let two same-seed runs
    disagree ("timeout" on a busy machine, "ok" on an idle one). The parent waits at most
    :func:`wall_safety_s` of wall time (a hung child), then kills it. CPU seconds come from
    ``wait4``'s resource usage, so they are measured even when the child is killed.
    """
    load_split(dataset)  # load before forking so children share it and do not pay for it
    read_end, write_end = os.pipe()
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # ---- child
        try:
            os.close(read_end)
            import resource

            vm = _vm_bytes()
            if vm is not None:
                limit = vm + int(memory_mb * 2**20)
                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            # SIGPROF's default action ends the process: nothing the fit does (C code included) can
            # run past it. RLIMIT_CPU (whole seconds) is a backstop should the timer be lost.
            signal.signal(signal.SIGPROF, signal.SIG_DFL)
            signal.setitimer(signal.ITIMER_PROF, cpu_limit_s)
            backstop = math.ceil(cpu_limit_s) + 1
            resource.setrlimit(resource.RLIMIT_CPU, (backstop, backstop + 1))
            try:
                result = run_experiment(dataset, config_text) if allocate_mb is None else _allocate(allocate_mb)
            except MemoryError:
                result = {"status": "memory", "score": None, "detail": "MemoryError"}
            except BaseException as err:  # noqa: BLE001
                result = {"status": "crashed", "score": None, "detail": type(err).__name__}
            signal.setitimer(signal.ITIMER_PROF, 0)  # finished in time: writing the result must not be cut
            os.write(write_end, (json.dumps(result) + "\n").encode())
        finally:
            os._exit(0)
    # ---- parent (the sandbox server)
    os.close(write_end)
    chunks: list[bytes] = []
    deadline = start + wall_safety_s(cpu_limit_s)
    hung = False
    while True:
        remaining = deadline - time.perf_counter()
        if remaining <= 0:
            hung = True
            break
        ready, _, _ = select.select([read_end], [], [], remaining)
        if ready:
            chunk = os.read(read_end, 65536)
            if not chunk:
                break
            chunks.append(chunk)
    if hung:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    os.close(read_end)
    _, status, usage = os.wait4(pid, 0)
    cpu_s = usage.ru_utime + usage.ru_stime
    wall_s = time.perf_counter() - start
    if hung:
        return {"status": "timeout", "score": None, "cpu_s": cpu_s, "wall_s": wall_s,
                "detail": f"no result after {wall_safety_s(cpu_limit_s):g} s of wall time (safety net)"}
    try:
        result = json.loads(b"".join(chunks).decode())
    except ValueError:
        signal_number = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        if signal_number in (signal.SIGPROF, signal.SIGXCPU, signal.SIGKILL):
            result = {"status": "timeout", "score": None, "detail": f"CPU-time limit ({cpu_limit_s:g} CPU s)"}
        else:
            result = {"status": "crashed", "score": None, "detail": f"child ended with status {status}"}
    result.update(cpu_s=cpu_s, wall_s=wall_s)
    return result


def _serve() -> None:
    """The sandbox server: one JSON request per stdin line, one JSON result per stdout line."""
    # Import every estimator module once here, so that forked children inherit them instead
    # of each paying ~0.15 CPU s of imports that would be charged to the experiment.
    _build_estimator({"model": "knn", "scaler": "standard"})
    for line in sys.stdin:
        request = json.loads(line)
        try:
            allocate = request.get("allocate_mb")
            result = _run_forked(request["dataset"], request["config"], float(request["cpu_limit_s"]),
                                 float(request["memory_mb"]), None if allocate is None else float(allocate))
        except Exception as err:  # noqa: BLE001 - the server must keep serving
            result = {"status": "crashed", "score": None, "detail": f"sandbox: {type(err).__name__}: {err}",
                      "cpu_s": 0.0, "wall_s": 0.0}
        sys.stdout.write(json.dumps(result) + "\n")
        sys.stdout.flush()


class Sandbox:
    """A small server process that runs experiments, one forked child each.

    Why a server: forking the notebook's own process (which may hold torch and a GPU
    context) would be slow and unsafe; the server holds only numpy and scikit-learn,
    runs single-threaded BLAS (so measured CPU seconds are not inflated by thread
    contention), and forks in a few milliseconds. Start-up (about 2-3 CPU seconds of
    imports) is measured in :attr:`startup_cpu_s`.
    """

    def __init__(self, cpu_limit_s: float = 2.0, memory_mb: float = 1024.0):
        if sys.platform.startswith("win"):
            raise RuntimeError("the research-task sandbox needs os.fork (Linux, macOS or Colab)")
        self.cpu_limit_s = float(cpu_limit_s)
        self.memory_mb = float(memory_mb)
        self.startup_cpu_s = 0.0
        self._process: subprocess.Popen | None = None

    def _start(self) -> None:
        env = dict(os.environ)
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env[var] = "1"
        repo = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = repo + os.pathsep + env.get("PYTHONPATH", "")
        self._process = subprocess.Popen(
            [sys.executable, "-c", "from wmkit.envs.research import _serve; _serve()"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)

    def run(self, dataset: str, config_text: str) -> ExecutionResult:
        """Execute one (already validated) config for real."""
        return self._request({"dataset": dataset, "config": config_text})

    def probe_memory(self, megabytes: float) -> ExecutionResult:
        """Self-test of the limits: a child allocates ``megabytes`` under the same time and memory
        limits as an experiment (the bounded experiments rarely need enough memory to show it)."""
        return self._request({"dataset": "iris", "config": "", "allocate_mb": float(megabytes)})

    def _request(self, request: dict[str, Any]) -> ExecutionResult:
        if self._process is None or self._process.poll() is not None:
            self._start()
        assert self._process is not None and self._process.stdin and self._process.stdout
        request = {**request, "cpu_limit_s": self.cpu_limit_s, "memory_mb": self.memory_mb}
        self._process.stdin.write(json.dumps(request) + "\n")
        self._process.stdin.flush()
        # The server enforces the limits itself; this outer wait only guards against a hung server.
        ready, _, _ = select.select([self._process.stdout], [], [], wall_safety_s(self.cpu_limit_s) + 120)
        line = self._process.stdout.readline() if ready else ""
        if not line:
            self.close()
            return ExecutionResult("crashed", None, self.cpu_limit_s, self.cpu_limit_s, "sandbox server died")
        data = json.loads(line)
        return ExecutionResult(status=data["status"], score=data.get("score"), cpu_s=float(data["cpu_s"]),
                               wall_s=float(data["wall_s"]), detail=data.get("detail", ""))

    def close(self) -> None:
        if self._process is not None:
            try:
                self._process.kill()
                self._process.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired) as err:  # already gone, or stuck: nothing else to do
                print(f"sandbox: could not stop the server cleanly ({err})", file=sys.stderr)
            self._process = None

    def __del__(self) -> None:
        self.close()


# -------------------------------------------------------------------- grading


def percentile(score: float, pool_scores: Any) -> float:
    """Share of the pool below ``score``, ties counted half (mid-rank), in [0, 1]."""
    pool = np.asarray(pool_scores, dtype=float)
    if pool.size == 0:
        raise ValueError("the reference pool holds no valid score")
    ties = np.isclose(pool, score, rtol=0.0, atol=1e-12)
    below = (pool < score) & ~ties
    return float((below.sum() + 0.5 * ties.sum()) / pool.size)


def grade(status: str, score: float | None, pool_scores: Any) -> float:
    """WMRL's research-task grade: 0.0 invalid, 0.1 runtime error, 0.2 no valid result, 0.5 + 0.5·pct."""
    if status not in ("ok", "no_result", "invalid", *RUNTIME_STATUSES):
        raise ValueError(f"unknown status {status!r}")
    if status == "invalid":
        return GRADE_INVALID
    if status in RUNTIME_STATUSES:
        return GRADE_RUNTIME_ERROR
    if status == "no_result" or score is None:
        return GRADE_NO_RESULT
    return 0.5 + 0.5 * percentile(score, pool_scores)


# -------------------------------------------------------------------- cost ledger


PREDICTION_WORK = 1e-3
"""Work units charged per world-model query on the research tasks (a real execution is 1): a query
costs about a thousandth of an execution's CPU seconds (notebook 04 measures the ratio)."""


@dataclass
class CostLedger:
    """What one run (one arm of an experiment) was charged, in two measures.

    * **CPU seconds**, measured: executions are charged their measured CPU seconds even
      when the result came from the cache ("as if run"): the cache saves the kit's wall
      time, not the agent's bill. A timing moves by a few percent from run to run.
    * **Work**, counted: 1 unit per real execution, a fixed fraction of a unit per
      world-model query, and a build's own count. Two same-seed runs charge the same
      work exactly, so compute ratios in work units are reproducible.
    """

    execution_s: float = 0.0
    """CPU seconds of real executions charged (cached ones included)."""
    executions: int = 0
    """Real executions charged."""
    cached_executions: int = 0
    """How many of those were served from the cache."""
    prediction_s: float = 0.0
    """CPU seconds of world-model predictions."""
    predictions: int = 0
    """World-model predictions charged."""
    build_s: float = 0.0
    """One-off costs: building a world model, including the executions it learned from."""
    work: float = 0.0
    """Work units charged, build included: executions + predictions × their unit + build work."""
    build_work: float = 0.0
    """The build's share of :attr:`work` (the executions a world model learned from)."""

    def charge_execution(self, cpu_s: float, cached: bool = False) -> None:
        self.execution_s += float(cpu_s)
        self.executions += 1
        self.cached_executions += int(cached)
        self.work += 1.0

    def charge_prediction(self, cpu_s: float, n: int, work_per_query: float = PREDICTION_WORK) -> None:
        self.prediction_s += float(cpu_s)
        self.predictions += int(n)
        self.work += float(work_per_query) * int(n)

    def charge_build(self, cpu_s: float, work: float = 0.0) -> None:
        self.build_s += float(cpu_s)
        self.build_work += float(work)
        self.work += float(work)

    @property
    def total_s(self) -> float:
        """Everything charged in CPU seconds: execution + prediction + build."""
        return self.execution_s + self.prediction_s + self.build_s

    def snapshot(self) -> dict[str, float]:
        return {**asdict(self), "total_s": self.total_s}


# ------------------------------------------------------------------ environment


@dataclass
class ResearchEnv:
    """Research tasks over scikit-learn datasets, graded by real, sandboxed execution.

    ``tasks`` are the datasets a policy trains on. Each has a reference pool of
    ``pool_size`` configs drawn uniformly from :data:`RESEARCH_SPACE` (seeded); their
    valid test accuracies are the "leaderboard" a valid experiment's percentile is
    taken against. Building a pool is charged to :attr:`setup_ledger`.
    """

    tasks: tuple[str, ...] = ("digits", "breast_cancer", "wine")
    """Datasets the policy is trained on (the prompts)."""
    pool_size: int = 32
    """Configs in each dataset's reference pool."""
    seed: int = 0
    """Seed of the reference pools."""
    cpu_limit_s: float = 2.0
    """CPU-time limit of one execution, in CPU seconds (the wall clock is only a safety net, see
    :func:`wall_safety_s`): the same config gets the same grade on an idle and on a busy machine."""
    memory_mb: float = 1024.0
    """Address space an execution may add to the sandbox's own (new mappings beyond what the
    server already holds; small fits may reuse its free heap without touching the limit)."""
    cache_path: str | None = None
    """Optional JSONL file the execution cache is loaded from and appended to (resumable runs)."""
    space: Space = field(default=RESEARCH_SPACE)
    """The configs a policy can write."""

    def __post_init__(self) -> None:
        self.tasks = tuple(self.tasks)
        for dataset in self.tasks:
            load_split(dataset)  # clear error for unknown names
        self.sandbox = Sandbox(self.cpu_limit_s, self.memory_mb)
        self.setup_ledger = CostLedger()
        """Reference pools (charged once per dataset, shared by every arm)."""
        self.evaluation_ledger = CostLedger()
        """Executions made only to evaluate policies and world models (never charged to an arm)."""
        self._cache: dict[tuple[str, str], ExecutionResult] = {}
        self._pools: dict[str, np.ndarray] = {}
        self._configs = self.space.enumerate()
        if self.cache_path and Path(self.cache_path).exists():
            for line in Path(self.cache_path).read_text().splitlines():
                row = json.loads(line)
                if row.get("cpu_limit_s") == self.cpu_limit_s:
                    self._cache[(row["dataset"], row["config"])] = ExecutionResult(**row["result"])

    # -- execution -------------------------------------------------------------

    @property
    def configs(self) -> list[tuple[int, ...]]:
        """Every config of the space, in the order of :meth:`grade_table`."""
        return self._configs

    def execute(self, dataset: str, text: str, ledger: CostLedger | None = None) -> tuple[ExecutionResult, bool]:
        """Parse agent text and run it for real (or serve it from the cache); charge ``ledger``.

        Returns ``(result, cached)``. Invalid text is never executed: its result has status
        ``invalid`` and the parse time as its cost.
        """
        start = time.process_time()
        config, reason = parse_experiment(text)
        if config is None:
            result = ExecutionResult("invalid", None, time.process_time() - start, 0.0, reason or "")
            if ledger is not None:
                ledger.charge_execution(result.cpu_s)
            return result, False
        canonical = json.dumps(config, sort_keys=True)
        key = (dataset, canonical)
        cached = key in self._cache
        if not cached:
            self._cache[key] = self.sandbox.run(dataset, canonical)
            if self.cache_path:
                with open(self.cache_path, "a") as handle:
                    handle.write(json.dumps({"dataset": dataset, "config": canonical, "cpu_limit_s": self.cpu_limit_s,
                                             "result": asdict(self._cache[key])}) + "\n")
        result = self._cache[key]
        if ledger is not None:
            ledger.charge_execution(result.cpu_s, cached=cached)
        return result, cached

    def pool_scores(self, dataset: str) -> np.ndarray:
        """Valid test accuracies of the dataset's reference pool (built and charged on first use)."""
        if dataset not in self._pools:
            rng = np.random.default_rng([self.seed, DATASETS.index(dataset)])
            chosen = rng.choice(len(self._configs), size=min(self.pool_size, len(self._configs)), replace=False)
            scores = []
            for index in sorted(chosen):
                result, _ = self.execute(dataset, self.space.render(self._configs[index]), self.setup_ledger)
                if result.status == "ok":
                    scores.append(result.score)
            if not scores:
                raise RuntimeError(f"no config of the reference pool of {dataset} produced a valid result")
            self._pools[dataset] = np.asarray(scores)
        return self._pools[dataset]

    def grade_text(self, dataset: str, text: str, ledger: CostLedger | None = None) -> float:
        """The WMRL grade of agent text on a dataset (runs it for real, charging ``ledger``)."""
        result, _ = self.execute(dataset, text, ledger)
        return grade(result.status, result.score, self.pool_scores(dataset))

    def real_grades(self, task: str, choices: list[tuple[int, ...]], outcome_seeds: Any, ledger: CostLedger) -> list[float]:
        """Real grades of a group of configs (the loop's call). Execution is deterministic, so
        ``outcome_seeds`` are not needed here; they exist for environments with noisy outcomes."""
        return [self.grade_text(task, self.space.render(choice), ledger) for choice in choices]

    # -- evaluation (never charged to an arm) -----------------------------------

    def grade_table(self, dataset: str) -> np.ndarray:
        """The real grade of every config of the space on ``dataset`` (index = :attr:`configs`).

        Used to evaluate policies exactly (expected real grade) and to measure world
        models; its executions are charged to :attr:`evaluation_ledger`, not to any arm.
        """
        pool = self.pool_scores(dataset)
        grades = np.empty(len(self._configs))
        for i, choice in enumerate(self._configs):
            result, _ = self.execute(dataset, self.space.render(choice), self.evaluation_ledger)
            grades[i] = grade(result.status, result.score, pool)
        return grades

    def true_values(self, task: str) -> np.ndarray:
        """Expected real grade of every config (deterministic execution: the grade itself)."""
        return self.grade_table(task)

    def results(self, dataset: str) -> list[ExecutionResult]:
        """Execution results of every config (from the cache once :meth:`grade_table` ran)."""
        return [self.execute(dataset, self.space.render(choice))[0] for choice in self._configs]

    def close(self) -> None:
        self.sandbox.close()


def config_features(space: Space, choices: list[tuple[int, ...]]) -> np.ndarray:
    """One-hot encoding of configs (one block per head; an inactive head's block stays 0)."""
    widths = [len(h.options) for h in space.heads]
    offsets = np.concatenate([[0], np.cumsum(widths)[:-1]])
    out = np.zeros((len(choices), int(sum(widths))))
    for row, choice in enumerate(choices):
        for head, k in enumerate(choice):
            if k >= 0:
                out[row, offsets[head] + k] = 1.0
    return out


if __name__ == "__main__":  # pragma: no cover - `python -m wmkit.envs.research` runs the server
    _serve()
