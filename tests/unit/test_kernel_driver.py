"""The test front end's wait for a request (:meth:`kernel_driver.Kernel._until_idle`),
against a scripted client: outputs after empty polls are kept, the wait ends only with
the shell reply, a reply whose idle status never comes ends the wait early
(:class:`kernel_driver.LostMessage`), a request the kernel has not taken up gets a nudge
from a new connection, and :meth:`~kernel_driver.Kernel.evaluate` asks once more when
IOPub lost its answer."""

from __future__ import annotations

import queue
import time

import pytest

from . import kernel_driver
from .kernel_driver import Kernel


class Client:
    """IOPub and shell messages handed out in order; ``None`` is a poll that finds none."""

    def __init__(self, iopub: list, shell: list) -> None:
        self.iopub, self.shell = list(iopub), list(shell)

    def get_iopub_msg(self, timeout: float) -> dict:
        item = self.iopub.pop(0) if self.iopub else None
        if item is None:
            raise queue.Empty
        return item

    def get_shell_msg(self, timeout: float) -> dict:
        item = self.shell.pop(0) if self.shell else None
        if item is None:
            raise queue.Empty
        return item


def _status(state: str, parent: str) -> dict:
    return {
        "msg_type": "status",
        "content": {"execution_state": state},
        "parent_header": {"msg_id": parent},
    }


def _kernel(client: Client, timeout: float = 60.0) -> Kernel:
    kernel = Kernel.__new__(Kernel)  # no kernel process: the client is scripted
    kernel.client, kernel.timeout, kernel.models = client, timeout, {}
    return kernel


def _nudged_by(kernel: Kernel, on_kernel_info) -> None:
    """Give ``kernel`` a manager whose short-lived clients (the nudges) call
    ``on_kernel_info`` when they send their request."""

    class Fresh:
        def start_channels(self, **channels):
            assert channels["shell"] and not channels["iopub"]

        def kernel_info(self):
            on_kernel_info()

        def get_shell_msg(self, timeout):
            raise queue.Empty

        def stop_channels(self):
            pass

    kernel.manager = type("Manager", (), {"client": lambda self: Fresh()})()


def test_an_output_after_empty_polls_is_kept():
    shown = {
        "msg_type": "display_data",
        "content": {"data": {"text/plain": "4"}},
        "parent_header": {"msg_id": "a"},
    }
    reply = {"parent_header": {"msg_id": "a"}}
    client = Client([_status("busy", "a"), None, None, shown, _status("idle", "a")], [reply])
    assert _kernel(client)._until_idle("a") == [{"text/plain": "4"}]


def test_the_wait_ends_with_the_reply_not_before():
    # the idle status came first: the next request must not meet this one's reply
    reply = {"parent_header": {"msg_id": "a"}}
    client = Client([_status("busy", "a"), _status("idle", "a")], [None, None, None, reply])
    assert _kernel(client)._until_idle("a") == []
    assert client.shell == []


def test_a_request_the_kernel_missed_is_nudged_from_a_new_connection(monkeypatch):
    monkeypatch.setattr(kernel_driver, "NUDGE_S", 0.1)
    client = Client([], [])
    nudges = []

    def wake():  # the kernel wakes and runs the request
        nudges.append(time.monotonic())
        client.iopub += [_status("busy", "a"), _status("idle", "a")]
        client.shell.append({"parent_header": {"msg_id": "a"}})

    kernel = _kernel(client)
    _nudged_by(kernel, wake)
    start = time.monotonic()
    assert kernel._until_idle("a") == []
    assert len(nudges) == 1 and nudges[0] - start >= 0.1


def test_nudges_do_not_extend_the_limit(monkeypatch):
    # a request that stays lost: the nudges' own statuses must not keep the wait alive
    monkeypatch.setattr(kernel_driver, "NUDGE_S", 0.01)
    client = Client([], [])
    nudges = []

    def answer_only_the_nudge():
        nudges.append(1)
        assert len(nudges) < 200, "nudged on and on: the limit never came"
        client.iopub += [_status("busy", "nudge"), _status("idle", "nudge")]

    kernel = _kernel(client, timeout=0.5)
    _nudged_by(kernel, answer_only_the_nudge)
    with pytest.raises(TimeoutError, match="did not finish within"):
        kernel._until_idle("a")
    assert len(nudges) >= 2


def test_a_request_under_way_is_not_nudged(monkeypatch):
    monkeypatch.setattr(kernel_driver, "NUDGE_S", 0.0)
    reply = {"parent_header": {"msg_id": "a"}}
    client = Client([_status("busy", "a"), None, None, None, _status("idle", "a")], [reply])
    kernel = _kernel(client)  # no manager: a nudge would raise AttributeError
    assert kernel._until_idle("a") == []


def test_a_reply_without_its_idle_status_fails_soon(monkeypatch):
    monkeypatch.setattr(kernel_driver, "REPLY_TO_IDLE_S", 0.5)
    other = {"parent_header": {"msg_id": "earlier"}}
    reply = {"parent_header": {"msg_id": "a"}}
    client = Client([_status("busy", "a")], [other, reply])
    start = time.monotonic()
    with pytest.raises(kernel_driver.LostMessage, match="idle status .* never came"):
        _kernel(client)._until_idle("a")
    assert time.monotonic() - start < 10  # not the request's whole limit (60 s here)


def test_silence_fails_at_the_limit():
    client = Client([], [])
    with pytest.raises(TimeoutError, match="did not finish within"):
        _kernel(client, timeout=0.2)._until_idle("a")


def test_evaluate_asks_again_when_iopub_lost_the_answer(monkeypatch):
    monkeypatch.setattr(kernel_driver, "REPLY_TO_IDLE_S", 0.2)
    kernel = _kernel(Client([], []))
    sent = []

    def execute(code, store_history):
        sent.append(code)
        msg_id = f"r{len(sent)}"
        if len(sent) == 1:  # the first answer is lost: only the shell reply comes
            kernel.client.shell.append({"parent_header": {"msg_id": msg_id}})
        else:
            answer = {
                "msg_type": "display_data",
                "content": {"data": {"application/x-nqf-json": "[1, 2]"}},
                "parent_header": {"msg_id": msg_id},
            }
            kernel.client.iopub += [answer, _status("idle", msg_id)]
        return msg_id

    kernel.client.execute = execute
    assert kernel.evaluate("[1, 2]") == [1, 2]
    assert len(sent) == 2 and sent[0] == sent[1]
