"""Notebook 01 in a real browser: JupyterLab on a temporary copy, opened in headless Chromium, run
at `smoke` through the server's kernel ("Run All", as a student would), saved, screenshotted.

Needs Debian's `chromium` (.ci/run installs it where apt-get can) and JupyterLab (the `lab`
extra); skipped with the reason otherwise. Chromium is driven through its DevTools protocol
(`websocket-client`, a jupyter_server dependency) and JupyterLab's own command registry
(`--LabApp.expose_app_in_browser`), so no browser-automation package is needed.

    pytest -m browser tests/test_browser.py      # WMKIT_BROWSER_SCREENSHOT=path.png keeps the screenshot
"""
from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
NOTEBOOK = "01_build_world_model.ipynb"
BUDGET_SECONDS = 360
"""The whole browser run's limit: it catches a hang, it does not time the notebook. Generous: about
30 s on 2 idle AMD EPYC cores, but past 180 s once on cores shared with two other jobs."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(what: str, check, timeout: float, every: float = 0.5):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(every)
    raise TimeoutError(f"{what}: not within {timeout:.0f} s")


class DevTools:
    """The few Chrome DevTools protocol calls the test makes, on one page."""

    def __init__(self, port: int):
        import websocket

        pages = _wait("a Chromium page", lambda: self._pages(port), 30)
        self.ws = websocket.create_connection(pages[0]["webSocketDebuggerUrl"], timeout=60, suppress_origin=True)
        self.next_id = 0

    @staticmethod
    def _pages(port: int):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json", timeout=2) as reply:
                return [p for p in json.load(reply) if p.get("type") == "page"]
        except OSError:
            return None

    def call(self, method: str, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            reply = json.loads(self.ws.recv())
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]

    def js(self, expression: str):
        """The value of a JavaScript expression in the page (awaited when it is a promise)."""
        result = self.call("Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:80]}: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")


# JupyterLab's notebook panel, once the notebook is open and its kernel is connected.
PANEL = "(window.jupyterapp && jupyterapp.shell.currentWidget && jupyterapp.shell.currentWidget.content " \
        "&& jupyterapp.shell.currentWidget.content.widgets ? jupyterapp.shell.currentWidget : null)"
CELLS = f"{PANEL}.content.widgets.map(c => c.model)"


@pytest.mark.browser
@pytest.mark.notebook
@pytest.mark.slow
def test_notebook_01_runs_in_jupyterlab_in_headless_chromium(tmp_path):
    browser = next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)
    if browser is None:
        pytest.skip("no Chromium here (Debian: apt-get install chromium; .ci/run does it where it can)")
    pytest.importorskip("jupyterlab", reason="JupyterLab is not installed (pip install -e '.[lab]')")
    pytest.importorskip("websocket", reason="websocket-client is not installed (a jupyter_server dependency)")
    import papermill as pm

    start = time.monotonic()
    work = tmp_path / "lab"
    work.mkdir()
    # The notebook as a student gets it, with the parameters a student would type: smoke, outputs here.
    pm.execute_notebook(str(REPO / "notebooks" / NOTEBOOK), str(work / NOTEBOOK), prepare_only=True,
                        parameters={"PROFILE": "smoke", "OUTPUT_DIR": str(work / "out"), "RUNS_DIR": str(work / "runs")},
                        progress_bar=False)
    lab_port, devtools_port, token = _free_port(), _free_port(), "wmkit-browser-test"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
           "JUPYTER_CONFIG_DIR": str(tmp_path / "jupyter-config"), "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
           # One torch thread in the kernel: next to other jobs on 2 cores, two threads can make the
           # smoke notebook several times slower (OpenMP oversubscription); what is tested is the browser.
           "OMP_NUM_THREADS": "1"}
    log = (tmp_path / "lab.log").open("w")
    lab = subprocess.Popen([sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={lab_port}",
                            "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={token}",
                            f"--ServerApp.root_dir={work}", "--LabApp.expose_app_in_browser=True",
                            "--ServerApp.allow_root=True"], env=env, stdout=log, stderr=subprocess.STDOUT)
    chrome = None
    try:
        def lab_up():
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{lab_port}/api/status?token={token}", timeout=2):
                    return True
            except OSError:
                return False

        _wait("JupyterLab", lab_up, 60)
        chrome = subprocess.Popen([browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                                   "--disable-dev-shm-usage", f"--remote-debugging-port={devtools_port}",
                                   f"--user-data-dir={tmp_path / 'chromium'}", "--window-size=1400,1100",
                                   f"http://127.0.0.1:{lab_port}/lab/tree/{NOTEBOOK}?token={token}"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        page = DevTools(devtools_port)
        _wait("the notebook open with an idle kernel", lambda: page.js(
            f"{PANEL} !== null && {PANEL}.sessionContext.session !== null && "
            f"{PANEL}.sessionContext.session.kernel !== null && {PANEL}.sessionContext.kernelDisplayStatus === 'idle'"),
              90)
        # Not awaited: the command's promise settles only when every cell has run.
        page.js("(() => { jupyterapp.commands.execute('notebook:run-all-cells'); return true; })()")

        def finished():
            state = page.js(f"""(() => {{
                const cells = {CELLS}.filter(m => m.type === 'code');
                const error = cells.some(m => m.outputs.toJSON().some(o => o.output_type === 'error'));
                const done = cells.every(m => m.executionCount !== null);
                return {{error, done, idle: {PANEL}.sessionContext.kernelDisplayStatus === 'idle'}};
            }})()""")
            if state["error"]:
                raise AssertionError("a cell raised in the browser run (see the saved notebook)")
            return state["done"] and state["idle"]

        _wait("Run All", finished, BUDGET_SECONDS - (time.monotonic() - start), every=2)
        page.js("jupyterapp.commands.execute('docmanager:save')")
        # The screenshot shows the first figure (JupyterLab renders only the cells in view), without
        # JupyterLab's "get notified about news?" toast.
        shows_figure = page.js(f"""(async () => {{
            const notebook = {PANEL}.content;
            const index = notebook.widgets.findIndex(c => c.model.type === 'code'
                && c.model.outputs.toJSON().some(o => o.data && o.data['image/png']));
            if (index < 0) return false;
            notebook.activeCellIndex = index;
            await notebook.scrollToItem(index, 'start');
            document.querySelectorAll('.Toastify__toast').forEach(toast => toast.remove());
            return true;
        }})()""")
        assert shows_figure, "no cell shows a figure in the browser"
        time.sleep(2)
        shot = base64.b64decode(page.call("Page.captureScreenshot", format="png")["data"])
    finally:
        for process in (chrome, lab):
            if process is not None:
                process.terminate()
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    process.kill()
        log.close()
    screenshot = tmp_path / "notebook_01.png"
    screenshot.write_bytes(shot)
    if os.environ.get("WMKIT_BROWSER_SCREENSHOT"):
        shutil.copyfile(screenshot, os.environ["WMKIT_BROWSER_SCREENSHOT"])
    assert shot.startswith(b"\x89PNG") and len(shot) > 20_000, "the screenshot is empty"

    saved = json.loads((work / NOTEBOOK).read_text())
    code = [c for c in saved["cells"] if c["cell_type"] == "code"]
    assert all(c.get("execution_count") for c in code), "the saved notebook has cells that did not run"
    assert any(o.get("output_type") != "error" and "image/png" in o.get("data", {}) for c in code for o in c["outputs"])
    results = json.loads((work / "out" / "results.json").read_text())
    assert results["profile"] == "smoke" and results["notebook"] == "01_build_world_model"
    assert time.monotonic() - start < BUDGET_SECONDS
