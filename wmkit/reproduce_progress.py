"""Terminal progress of `python -m wmkit reproduce` (`make reproduce`): one status line per notebook.

papermill's own bar counts cells, so its ETA assumes every cell takes as long as the cells so far,
which says seconds while a training cell runs for minutes. This line instead shows

    [2/5] 02_rlvr_world_model  cell 14/40 | 3:12 so far, ~6 min left of ~9 min (last run) | 4 min for the rest
          GRPO: 120/300 [00:20<00:30]

- the notebook's expected time: its last run's wall time at this profile (runs/<profile>/results.json),
  else the kit's time target for that notebook and profile (`profiles.NOTEBOOK_TIME_TARGETS_MINUTES`);
- the training step the kernel is at: the tqdm bar the notebook is showing right now, read from
  the widget messages (ipywidgets, the normal case) or the stderr text (without ipywidgets),
  with that bar's own ETA, which is meaningful because it counts steps of one loop.

On a terminal the line is rewritten in place; in a log (CI) a line is printed every 30 seconds,
also while a cell runs without a bar the client sees.
"""
from __future__ import annotations

import html
import re
import sys
import threading
import time

from papermill.clientwrap import PapermillNotebookClient
from papermill.engines import NBClientEngine, papermill_engines
from papermill.log import logger

_BAR = re.compile(r"(?P<n>\d+)/(?P<total>\d+) \[(?P<elapsed>[\d:]+)<(?P<left>[\d:?]+)")


def minutes(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 60}:{seconds % 60:02d}"


def read_bar(text: str) -> tuple[str, str] | None:
    """(description, 'n/total [elapsed<left]') of a tqdm meter's text, or None."""
    text = html.unescape(text).replace("\u2007", " ").replace("\r", "\n").strip().split("\n")[-1]
    found = _BAR.search(text)
    if not found:
        return None
    desc = re.sub(r"\s*\d+%\s*$", "", text[:found.start()].split("|")[0]).strip().rstrip(":")
    return desc, f"{found['n']}/{found['total']} [{found['elapsed']}<{found['left']}]"


class SeriesProgress:
    """The status line of a series of notebooks; `expected` maps a notebook's stem to seconds (None: unknown)."""

    def __init__(self, expected: dict[str, float | None], stream=None, log_every: float = 30.0):
        self.expected = expected
        self.order = list(expected)
        self.stream = stream or sys.stdout
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.log_every = log_every
        self.current: str | None = None
        self.start = self.last_shown = 0.0
        self.cell = (0, 0)
        self.bar: tuple[str, str] | None = None
        self._heartbeat: threading.Thread | None = None
        self._lock = threading.Lock()

    def begin(self, stem: str, cells: int) -> None:
        self.current, self.start, self.cell, self.bar = stem, time.perf_counter(), (0, cells), None
        expected = self.expected.get(stem)
        since = "unknown" if expected is None else f"~{minutes(expected)}"
        self._print(f"== [{self.order.index(stem) + 1}/{len(self.order)}] {stem}: expected {since}", final=True)
        if self._heartbeat is None:
            # A cell can run for minutes without a progress bar the client sees (a worker process's
            # training, a generation loop): without this the line would stand still all that time.
            self._heartbeat = threading.Thread(target=self._beat, daemon=True, name="reproduce-progress")
            self._heartbeat.start()

    def _beat(self) -> None:
        while True:
            time.sleep(0.5 if self.tty else max(self.log_every, 0.05))
            self.show()

    def cell_started(self, index: int) -> None:
        self.cell = (index + 1, self.cell[1])
        self.bar = None  # a new cell: the last cell's bar is finished
        self.show()

    def bar_text(self, text: str) -> None:
        bar = read_bar(text)
        if bar:
            self.bar = bar
            self.show()

    def line(self) -> str:
        elapsed = time.perf_counter() - self.start
        index = self.order.index(self.current)
        expected = self.expected.get(self.current)
        parts = [f"[{index + 1}/{len(self.order)}] {self.current}  cell {self.cell[0]}/{self.cell[1]}",
                 f"{minutes(elapsed)} so far"]
        if expected is not None:
            parts[-1] += (f", ~{minutes(expected - elapsed)} left" if elapsed < expected
                          else f", past the expected {minutes(expected)}")
        rest = [self.expected.get(s) for s in self.order[index + 1:]]
        if rest and all(r is not None for r in rest):
            parts.append(f"then ~{minutes(sum(rest))} for the other {len(rest)}")
        if self.bar:
            parts.append(f"{self.bar[0] or 'progress'} {self.bar[1]}")
        return " | ".join(parts)

    def show(self, force: bool = False) -> None:
        with self._lock:
            now = time.perf_counter()
            if self.current is None or (not force and now - self.last_shown < (0.5 if self.tty else self.log_every)):
                return
            self.last_shown = now
            self._print(self.line())

    def end(self, seconds: float) -> None:
        with self._lock:
            self._print(f"   {self.current} done in {minutes(seconds)}", final=True)
            self.current = None

    def _print(self, text: str, final: bool = False) -> None:
        if self.tty:
            width = 160
            self.stream.write("\r\033[K" + text[:width] + ("\n" if final else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()


class _WatchedClient(PapermillNotebookClient):
    """papermill's client, telling a SeriesProgress which cell runs and what its progress bar says."""

    progress: SeriesProgress | None = None

    def execute_cell(self, cell, cell_index, *args, **kwargs):
        if self.progress:
            self.progress.cell_started(cell_index)
        return super().execute_cell(cell, cell_index, *args, **kwargs)

    def handle_comm_msg(self, outs, msg, cell_index):
        super().handle_comm_msg(outs, msg, cell_index)
        if not self.progress:
            return
        # tqdm's widget: an HBox of (description HTML, progress bar, meter HTML); read the meter and
        # its box's description when the meter changes.
        comm_id = msg["content"].get("comm_id")
        value = msg["content"].get("data", {}).get("state", {}).get("value")
        if not isinstance(value, str):
            return
        for state in self.widget_state.values():
            children = state.get("children") or []
            if len(children) == 3 and children[2] == f"IPY_MODEL_{comm_id}":
                left = self.widget_state.get(children[0].removeprefix("IPY_MODEL_"), {}).get("value", "")
                self.progress.bar_text(f"{left}| {value}")
                return

    def output(self, outs, msg, display_id, cell_index):
        out = super().output(outs, msg, display_id, cell_index)
        if self.progress and msg["header"]["msg_type"] == "stream" and msg["content"].get("name") == "stderr":
            self.progress.bar_text(msg["content"].get("text", ""))  # tqdm text bars, without ipywidgets
        return out


class WatchedEngine(NBClientEngine):
    """papermill's nbclient engine with `_WatchedClient`; `progress` is set by the caller per notebook."""

    progress: SeriesProgress | None = None

    @classmethod
    def execute_managed_notebook(cls, nb_man, kernel_name, log_output=False, stdout_file=None, stderr_file=None,
                                 start_timeout=60, execution_timeout=None, **kwargs):
        # As NBClientEngine.execute_managed_notebook (papermill 2.7), with the watched client.
        kwargs = {k: v for k, v in kwargs.items() if k not in ("input_path", "timeout", "startup_timeout")}
        client = _WatchedClient(nb_man, kernel_name=kernel_name, log_output=log_output, stdout_file=stdout_file,
                                stderr_file=stderr_file, startup_timeout=start_timeout,
                                timeout=execution_timeout, log=logger, **kwargs)
        client.progress = cls.progress
        return client.execute()


papermill_engines.register("wmkit", WatchedEngine)
