"""A front end for tests: code run in a real Jupyter kernel, widgets moved as a reader would.

:class:`Kernel` starts a ``python3`` kernel (jupyter_client, the interpreter running the
tests), executes code and keeps what a front end such as JupyterLab or Colab receives:
the outputs of each execution and the state of every widget model (``comm_open`` and
``comm_msg`` "update" / "echo_update" messages, binary buffers put back at their
paths). :meth:`Kernel.move` sends the message a front end sends when the reader moves a
control, and returns once the kernel has handled it and gone idle, with the widget
state it sent back. The same messages serve ipywidgets 7 (Colab) and 8 (the lock).
"""

from __future__ import annotations

import base64
import json
import os
import queue
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jupyter_client.manager import start_new_kernel

from scripts.kernel_start import starting
from scripts.timeouts import scale

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
#: Seconds from the kernel's reply to a request to its idle status on IOPub (or back), at
#: most (stretched by NQF_TIMEOUT_SCALE); normally milliseconds.
REPLY_TO_IDLE_S = 10.0
#: Seconds a request may wait for the kernel to take it up (its "busy" status) before the
#: kernel is nudged (:meth:`Kernel._nudge`).
NUDGE_S = 3.0


class KernelError(RuntimeError):
    """Code run in the kernel raised; the message holds its traceback."""


class LostMessage(TimeoutError):
    """The kernel replied to a request, but its idle status (and maybe outputs) never
    came on IOPub. ipykernel 7 has been seen to lose IOPub messages now and then, in
    CI runs of the minimum environment; the test then waited out its whole limit (see
    also :meth:`Kernel._until_idle` on requests that the kernel misses)."""


@dataclass
class Model:
    """A widget model as a front end holds it."""

    comm_id: str
    state: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return str(self.state.get("_model_name", ""))


def _with_buffers(state: dict[str, Any], paths: list[list[Any]], buffers: list[Any]) -> None:
    for path, buffer in zip(paths, buffers, strict=False):
        target = state
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = bytes(buffer)


class Kernel:
    """A kernel in ``cwd`` with ``env`` added to (or, for a None value, removed from) this
    process's environment. Use as a context manager. ``timeout`` (seconds without a message
    from the kernel) and the start-up limit stretch with ``NQF_TIMEOUT_SCALE``."""

    def __init__(
        self, cwd: Path, env: dict[str, str | None] | None = None, timeout: float = 600.0
    ) -> None:
        environment = dict(os.environ)
        for key, value in (env or {}).items():
            if value is None:
                environment.pop(key, None)
            else:
                environment[key] = value
        self.timeout = timeout * scale()
        self.models: dict[str, Model] = {}
        with starting():  # no other kernel of the run is handed its ports
            self.manager, self.client = start_new_kernel(
                kernel_name="python3",
                cwd=str(cwd),
                env=environment,
                startup_timeout=120 * scale(),
            )

    def __enter__(self) -> Kernel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)

    def _handle(
        self, msg: dict[str, Any], outputs: list[dict[str, Any]], errors: list[str]
    ) -> None:
        kind, content = msg["msg_type"], msg["content"]
        if kind == "comm_open":
            model = self.models.setdefault(content["comm_id"], Model(content["comm_id"]))
            data = content.get("data", {})
            state = dict(data.get("state", {}))
            _with_buffers(state, data.get("buffer_paths", []), msg.get("buffers", []))
            model.state.update(state)
        elif kind == "comm_msg":
            data = content.get("data", {})
            if (
                data.get("method") in {"update", "echo_update"}
                and content["comm_id"] in self.models
            ):
                state = dict(data.get("state", {}))
                _with_buffers(state, data.get("buffer_paths", []), msg.get("buffers", []))
                self.models[content["comm_id"]].state.update(state)
        elif kind in {"display_data", "execute_result"}:
            outputs.append(content["data"])
        elif kind == "error":
            errors.append("\n".join(content.get("traceback", [])) or content.get("evalue", ""))
        elif kind == "stream" and content.get("name") == "stderr":
            outputs.append({"stderr": content["text"]})

    def _until_idle(self, parent: str, reply: bool = True) -> list[dict[str, Any]]:
        """The outputs of request ``parent``, once the kernel's idle status for it came
        and, for a request that has one (``reply``), its shell reply.

        IOPub is read in one-second polls, and the shell channel looked at in between:
        once the kernel has replied, its idle status must follow within seconds. If it
        does not, :class:`LostMessage` is raised at once instead of the whole limit
        being waited out (a kernel once sat idle while its test waited on IOPub).

        ipykernel 7.3, the newest for Python 3.10 (the minimum environment), can miss a
        request that reaches it while it sends a reply on the same socket: the request
        then waits, the kernel idle, until a new connection reaches that socket
        (ipykernel issue 1554, fixed in 7.4). Two guards: the wait ends only once the
        reply has come, so that the next request never meets this one's reply; and a
        request the kernel has not taken up (no "busy" status) within :data:`NUDGE_S`
        seconds gets a nudge, as Jupyter's server nudges each new connection."""
        outputs: list[dict[str, Any]] = []
        errors: list[str] = []
        heard = time.monotonic()  # when the kernel last sent anything for this request
        nudged = heard
        started = False  # its "busy" status came
        replied: float | None = None
        idle: float | None = None
        while idle is None or (reply and replied is None):
            try:
                msg = self.client.get_iopub_msg(timeout=1.0 if idle is None else 0.05)
            except queue.Empty:
                now = time.monotonic()
                if reply and replied is None and self._replied(parent):
                    replied = now
                if idle is None and replied is not None:
                    if now - replied > REPLY_TO_IDLE_S * scale():
                        raise LostMessage(
                            "the kernel replied, but its idle status for the request never "
                            "came on IOPub (a lost message)"
                        ) from None
                elif idle is not None and replied is None:
                    if now - idle > REPLY_TO_IDLE_S * scale():
                        break  # the outputs are complete; only the shell reply is late
                elif not started and now - nudged > NUDGE_S:
                    self._nudge()
                    nudged = now
                if now - heard > self.timeout:
                    raise TimeoutError(
                        f"the kernel did not finish within {self.timeout} s"
                    ) from None
                continue
            self._handle(msg, outputs, errors)
            if msg["parent_header"].get("msg_id") != parent:
                continue  # e.g. the statuses of a nudge: they do not extend the limit
            heard = time.monotonic()
            if msg["msg_type"] == "status":
                if msg["content"]["execution_state"] == "busy":
                    started = True
                elif msg["content"]["execution_state"] == "idle":
                    idle = heard
        if errors:
            raise KernelError(errors[0])
        return outputs

    def _nudge(self) -> None:
        """A ``kernel_info`` request from a new, short-lived connection to the kernel's
        shell socket: the new connection wakes a kernel that has missed a request."""
        client = self.manager.client()
        client.start_channels(shell=True, iopub=False, stdin=False, hb=False, control=False)
        try:
            client.kernel_info()
            try:
                client.get_shell_msg(timeout=0.5)
            except queue.Empty:  # busy with a long request: the connection was enough
                pass
        finally:
            client.stop_channels()

    def _replied(self, parent: str) -> bool:
        """Whether the shell reply to ``parent`` has come (earlier replies are dropped)."""
        while True:
            try:
                reply = self.client.get_shell_msg(timeout=0)
            except queue.Empty:
                return False
            if reply["parent_header"].get("msg_id") == parent:
                return True

    def run(self, code: str) -> list[dict[str, Any]]:
        """Execute ``code``; the display outputs (mime bundles) it produced. Raises
        :class:`KernelError` with the traceback if it raised."""
        return self._until_idle(self.client.execute(code, store_history=False))

    def evaluate(self, expression: str) -> Any:
        """The value of a JSON-serialisable Python ``expression`` in the kernel (sent as
        a display output, so that nothing else printed gets in its way); asked again
        once if IOPub lost the answer (:class:`LostMessage`)."""
        code = (
            "from IPython.display import display as _d; import json as _j\n"
            f"_d({{'application/x-nqf-json': _j.dumps({expression})}}, raw=True)"
        )
        try:
            outputs = self.run(code)
        except LostMessage:  # asking again is harmless: the expression changes nothing
            outputs = self.run(code)
        found = [o["application/x-nqf-json"] for o in outputs if "application/x-nqf-json" in o]
        return json.loads(found[-1])

    def png(self, expression: str) -> bytes:
        """The bytes of ``expression`` (a bytes object in the kernel)."""
        return base64.b64decode(
            self.evaluate(f"__import__('base64').b64encode({expression}).decode()")
        )

    def model(self, model_id: str) -> Model:
        return self.models[model_id]

    def children(self, model: Model) -> list[Model]:
        """A box's children (their references are ``IPY_MODEL_<id>``)."""
        return [
            self.models[ref.removeprefix("IPY_MODEL_")] for ref in model.state.get("children", [])
        ]

    def descendants(self, model_id: str) -> list[Model]:
        """Every model under the view ``model_id``, depth first, itself first."""
        model = self.models[model_id]
        out = [model]
        for child in self.children(model):
            out += self.descendants(child.comm_id)
        return out

    def move(self, model: Model, **state: Any) -> None:
        """Set ``state`` on a widget as a front end does when the reader moves it, and
        wait until the kernel has handled it (its redraw included)."""
        message = self.client.session.msg(
            "comm_msg",
            {
                "comm_id": model.comm_id,
                "data": {"method": "update", "state": state, "buffer_paths": []},
            },
        )
        self.client.shell_channel.send(message)
        model.state.update(state)
        self._until_idle(message["header"]["msg_id"], reply=False)  # a comm message has none
