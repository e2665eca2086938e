"""Run a notebook as a student runs it: in a real Jupyter kernel (nbclient driving jupyter_client's kernel).

`run_notebook(path)` starts a fresh `python3` kernel whose working folder is the notebook's own (nbs/), runs every
code cell in order with a per-cell timeout, and returns the executed notebook (it never writes the file). Like nbdev's
runner, it skips the cells flagged `#| eval: false` or with one of `skip_flags` (`#| slow` by default) and the cells
that call `nbdev_export(`. A failing or timed-out cell raises `NotebookRunError`, whose message names the notebook,
the cell (0-based index, as the issue tracker counts) and its first line. The kernel is shut down whatever happens,
and its connection file lives in a temporary folder that is removed afterwards: nothing is left behind.

Why not plain nbclient: a cell that shows ipywidgets (`interact`) could stall for exactly its whole timeout and then
finish normally. nbclient waits for the cell's `execute_reply` with one `poll` of the shell socket, as long as the
timeout. While it waits, nbclient's mimic of the Output widget (the one `interact` draws into) answers each output
it captures with a `comm_msg` that it sends on that same shell socket through a blocking shadow of it
(`jupyter_client.Session.send` shadows `zmq.asyncio` sockets). That send makes libzmq process the socket's pending
commands, which consumes the edge-triggered readiness of the socket's file descriptor, the only thing the asyncio
poll listens to, and pyzmq's asyncio wrapper is not told. If the `execute_reply` arrives just before such a send,
the poll never wakes: the reply sits in the socket until the timeout fires, then `poll(0)` finds it, and the cell
"finishes" after exactly `timeout` seconds (the symptom of jupyter/nbclient#312 and jupyter/nbconvert#2029, both
open). The subclass relies on nbclient's private waiting methods, as of nbclient 0.10 and 0.11 (the dev extra pins
`nbclient<0.12`). Measured (plain nbclient 0.11, pyzmq 27, two cores under load):
tutorial C run two at a time stalled at its slider cell in 4 of 74 runs (60 s each, the timeout given); a made-up
notebook of 300 cells that print into an Output widget stalled in 28 of 1,800 cells, none when the widget's sends
are switched off.

The fix, in two parts. `AsyncOutputWidget` sends the widget's messages through the asyncio socket itself, whose
wrapper checks the socket again after a send and wakes a waiting poll (alone: 0 of 1,800 cells stalled).
`ShortPollClient` also waits in short steps (`POLL_STEP` seconds) on the shell and the IOPub channels, each new poll
first checking the socket's state, so that a lost wake-up from any other cause costs at most one step (alone: no
stall, 61 waits of half a second in 1,800 cells; tutorial C two at a time: 0 of 24 runs stalled). Both together:
0 of 1,800 cells, and 0 of 30 runs of tutorial C two at a time.

A second failure of concurrent runs: two kernels started at the same moment can be handed the same free TCP port
(jupyter_client picks ports by binding to port 0 and releasing them before the kernel binds); the loser dies with
"Address already in use" before it answers `kernel_info`. `run_notebook` starts a new kernel, with new ports, when
the first one dies during start-up (up to `START_ATTEMPTS` times).
"""
from __future__ import annotations

import asyncio
import atexit
import os
import re
import shutil
import tempfile
from pathlib import Path
from queue import Empty
from time import monotonic

import nbformat
from jupyter_core.utils import ensure_async
from nbclient import NotebookClient
from nbclient.client import timestamp
from nbclient.jsonutil import json_clean
from nbclient.output_widget import OutputWidget
from nbclient.exceptions import CellExecutionComplete, CellExecutionError, CellTimeoutError

POLL_STEP = 0.5       # seconds: the longest single wait on a kernel channel
START_ATTEMPTS = 3    # kernels started per run when one dies during start-up (a port taken by another kernel)
_DIRECTIVE = re.compile(r"^\s*#\s*\|\s*(.*)$")


def directives(source: str) -> dict[str, str]:
    "The `#|` directives at the top of a cell, as nbdev reads them: name -> the rest of the line (`eval` -> `false`)."
    out = {}
    for line in source.splitlines():
        if not line.strip(): continue
        m = _DIRECTIVE.match(line)
        if m is None: break
        words = m.group(1).strip().split(None, 1)
        if words: out[words[0].rstrip(":")] = words[1].strip() if len(words) > 1 else ""
    return out


def skipped(cell, skip_flags=("slow",)) -> bool:
    "Whether nbdev's runner would skip this code cell: `#| eval: false`, a flag of `skip_flags`, or `nbdev_export(`."
    d = directives(cell.source)
    return (d.get("eval", "").lower() == "false" or bool(set(skip_flags) & set(d))
            or "nbdev_export" + "(" in cell.source)


class NotebookRunError(AssertionError):
    "A notebook cell failed or timed out in its kernel; the message names the notebook and the cell."

    def __init__(self, notebook: str, cell: int | None, source: str, why: str, kernel_pid: int | None = None):
        first = next((line for line in source.splitlines() if line.strip() and not _DIRECTIVE.match(line)), "")
        where = f"cell {cell} ({first[:80]!r})" if cell is not None else "kernel start"
        super().__init__(f"{notebook}, {where}: {why}")
        self.notebook, self.cell, self.kernel_pid = notebook, cell, kernel_pid


class AsyncOutputWidget(OutputWidget):
    """nbclient's mimic of the Output widget, sending its `comm_msg` through the asyncio socket itself: after the send,
    pyzmq's wrapper checks the socket again and wakes a waiting poll if a message is there (see the module's text)."""

    def _publish_msg(self, msg_type, data=None, metadata=None, buffers=None, **keys):
        content = json_clean(dict(data={} if data is None else data, comm_id=self.comm_id, **keys))
        session = self.kernel_client.session
        msg = session.msg(msg_type, content=content, parent=self.parent_header, metadata=metadata or {})
        self.kernel_client.shell_channel.socket.send_multipart(session.serialize(msg) + list(buffers or []))


class ShortPollClient(NotebookClient):
    """nbclient's client, waiting on the shell and IOPub channels in steps of `POLL_STEP` seconds, its Output widgets
    sending through the asyncio socket (see the module's text)."""

    def __init__(self, nb, km=None, **kw):
        super().__init__(nb, km=km, **kw)
        self.widget_registry["@jupyter-widgets/output"]["OutputModel"] = AsyncOutputWidget

    async def _async_poll_for_reply(self, msg_id, cell, timeout, task_poll_output_msg, task_poll_kernel_alive):
        assert self.kc is not None
        deadline = None if timeout is None else monotonic() + timeout
        while True:
            left = None if deadline is None else deadline - monotonic()
            if left is not None and left <= 0:
                task_poll_kernel_alive.cancel()
                await self._async_check_alive()
                try:
                    reply = await self._async_handle_timeout(timeout, cell)   # raises unless interrupt_on_timeout
                except CellTimeoutError:
                    task_poll_output_msg.cancel()
                    raise
                if reply is None: deadline = None; continue               # interrupted: wait for the reply
                reply["parent_header"] = {"msg_id": msg_id}
                return reply
            try:
                msg = await ensure_async(self.kc.shell_channel.get_msg(timeout=min(POLL_STEP, left or POLL_STEP)))
            except Empty:
                continue
            if msg["parent_header"].get("msg_id") != msg_id: continue
            if self.record_timing:
                cell["metadata"]["execution"]["shell.execute_reply"] = timestamp(msg)
            try:
                await asyncio.wait_for(task_poll_output_msg, self.iopub_timeout)
            except (asyncio.TimeoutError, Empty):
                if self.raise_on_iopub_timeout:
                    task_poll_kernel_alive.cancel()
                    raise CellTimeoutError.error_from_timeout_and_cell(
                        "Timeout waiting for IOPub output", self.iopub_timeout, cell) from None
                self.log.warning("Timeout waiting for IOPub output")
            task_poll_kernel_alive.cancel()
            return msg

    async def _async_poll_output_msg(self, parent_msg_id, cell, cell_index):
        assert self.kc is not None
        while True:
            try:
                msg = await ensure_async(self.kc.iopub_channel.get_msg(timeout=POLL_STEP))
            except Empty:
                continue
            if msg["parent_header"].get("msg_id") == parent_msg_id:
                try:
                    self.process_message(msg, cell, cell_index)   # raises CellExecutionComplete at the end
                except CellExecutionComplete:
                    return


def _kernel_pid(client) -> int | None:
    "The process id of the client's kernel (jupyter_client's local provisioner)."
    km = getattr(client, "km", None)
    prov = getattr(km, "provisioner", None) if km is not None else None
    return getattr(prov, "pid", None)


def run_notebook(path, *, timeout: int = 180, skip_flags=("slow",), allow_errors: bool = False,
                 env: dict | None = None, client_class=ShortPollClient):
    """Execute the notebook at `path` in a fresh kernel (cwd: its folder) and return it executed; the file is not written.

    `timeout` bounds each cell (seconds). Skipped cells (see `skipped`) keep their source and get no output.
    With `allow_errors`, a cell's error is recorded in its outputs (as Jupyter shows it) instead of raised.
    `env`: extra environment variables for the kernel, which otherwise gets this process's, without `MPLBACKEND`."""
    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    hidden = {}
    for i, c in enumerate(nb.cells):
        if c.cell_type == "code" and skipped(c, skip_flags):
            hidden[i], c.source, c.outputs = c.source, "", []     # nbclient does not run an empty cell
    state = {"cell": None, "pid": None}

    async def note_pid(notebook): state["pid"] = _kernel_pid(client)
    async def note_cell(cell, cell_index): state["cell"] = cell_index

    def failure(why):
        i = state["cell"]
        return NotebookRunError(path.name, i, nb.cells[i].source if i is not None else "", why, state["pid"])

    runtime = tempfile.mkdtemp(prefix="kernel_")                  # the kernel's connection file
    kernel_env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}   # the kernel's own inline backend,
    kernel_env.update(env or {})                                                # as in Jupyter (tests set Agg)
    try:
        for attempt in range(1, START_ATTEMPTS + 1):
            client = client_class(nb, timeout=timeout, kernel_name="python3", allow_errors=allow_errors,
                                  shutdown_kernel="immediate", shell_timeout_interval=1,
                                  on_notebook_start=note_pid, on_cell_execute=note_cell,
                                  resources={"metadata": {"path": str(path.parent)}})
            client.create_kernel_manager().connection_file = os.path.join(runtime, f"kernel-{attempt}.json")
            try:
                client.execute(env=kernel_env)
                break
            except CellExecutionError as e:
                raise failure(f"{e.ename}: {e.evalue}\n{str(e)[-3000:]}") from None
            except CellTimeoutError:
                raise failure(f"no reply within the {timeout} s cell timeout (the kernel was shut down)") from None
            except RuntimeError as e:   # DeadKernelError, or the kernel died before it answered kernel_info
                atexit.unregister(client._cleanup_kernel)
                if state["pid"] is not None or attempt == START_ATTEMPTS:
                    raise failure(f"the kernel died: {e}") from None
                # it died during start-up (a port taken by another kernel): a new kernel, new ports
    finally:
        shutil.rmtree(runtime, ignore_errors=True)
    for i, src in hidden.items(): nb.cells[i].source = src
    return nb


def errors(nb) -> list[tuple[int, dict]]:
    "The error outputs of an executed notebook: (cell index, output)."
    return [(i, o) for i, c in enumerate(nb.cells) if c.cell_type == "code"
            for o in c.get("outputs", []) if o.get("output_type") == "error"]


WIDGETS = re.compile(r"\bipywidgets\b|\binteract(ive)?\(")


def uses_widgets(path) -> bool:
    "Whether a notebook's code imports ipywidgets or calls `interact(`."
    nb = nbformat.read(path, as_version=4)
    return any(c.cell_type == "code" and WIDGETS.search(c.source) for c in nb.cells)


def kernel_notebooks(nbs: Path) -> list[Path]:
    "The notebooks the suite runs in a real kernel: the four tutorials and every notebook with widgets."
    from xai_geometry.course import TUTORIALS
    paths = sorted(p for p in nbs.glob("*.ipynb") if not p.name.startswith("_"))
    return [p for p in paths if p.stem in TUTORIALS or uses_widgets(p)]
