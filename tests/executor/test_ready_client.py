"""The qencode-nb engine's kernel client (qencode_nb.executor.ready_client.ReadyKernelClient):
ready when the kernel reports idle after its ``kernel_info_request``, with nothing of
the kernel's start left unread and nothing of the first cell lost, on a real ipykernel
(Unix sockets as a run has them; TCP where pyzmq has no ipc).  A kernel that dies
before its first reply still fails with jupyter_client's words, which the engine's
restart looks for (tests/executor/test_papermill_engine.py runs that restart through
this client).  No test asserts a wall-clock time (benchmarks/kernel_start.py)."""

from __future__ import annotations

import asyncio
import sys
import tempfile
from queue import Empty

import pytest

from qencode_nb.executor.papermill_engine import DIED_STARTING, READY_CLIENT
from qencode_nb.executor.ready_client import ReadyKernelClient, is_idle_after


def _run(coro):
    """``asyncio.run(coro)`` in a thread of its own: a test before this one on the same
    worker may have left an event loop running in the main thread (nbclient's run_sync),
    where ``asyncio.run`` refuses to start."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def _status(state, parent):
    return {"msg_type": "status", "parent_header": {"msg_id": parent},
            "content": {"execution_state": state}}


def test_idle_after_is_that_request_s_idle_status_only():
    assert is_idle_after(_status("idle", "a"), "a")
    assert not is_idle_after(_status("busy", "a"), "a")
    assert not is_idle_after(_status("idle", "b"), "a")          # another request's
    assert not is_idle_after(_status("starting", None), "a")
    assert not is_idle_after({"msg_type": "iopub_welcome", "parent_header": {},
                              "content": {}}, "a")


class _Channel:
    """An IOPub channel that hands out ``messages``, then raises Empty."""

    def __init__(self, messages):
        self.messages = list(messages)

    async def get_msg(self, timeout=None):
        if not self.messages:
            raise Empty
        return self.messages.pop(0)


@pytest.mark.parametrize("messages, heard", [
    ([{"msg_type": "iopub_welcome", "parent_header": {}, "content": {}},
      _status("busy", "a"), _status("idle", "a")], "idle"),
    ([_status("starting", None), _status("idle", "b")], "heard"),   # no idle of "a"
    ([], "silent"),
])
def test_iopub_after_tells_idle_from_heard_from_silent(messages, heard):
    """``idle``: ready at once; ``heard``: IOPub is connected but the kernel reported no
    idle after the request, so the client flushes as jupyter_client does; ``silent``:
    IOPub not yet connected, the request is sent again."""
    import time

    client = ReadyKernelClient()
    client._iopub_channel = _Channel(messages)
    assert _run(client._iopub_after("a", time.monotonic() + 5)) == heard


async def _start_and_run(argv=None):
    """Start a kernel with the ready client, then run one cell; returns what the client saw."""
    from jupyter_client.manager import AsyncKernelManager

    with tempfile.TemporaryDirectory(prefix="qnb-kernel-") as folder:
        kw = {"transport": "ipc", "ip": f"{folder}/kernel"} if sys.platform != "win32" else {}
        km = AsyncKernelManager(kernel_name="python3", client_class=READY_CLIENT, **kw)
        if argv is not None:
            km.kernel_spec.argv = argv
        await km.start_kernel(extra_arguments=["--HistoryManager.hist_file=:memory:"])
        kc = km.client()
        kc.start_channels()
        try:
            await kc.wait_for_ready(timeout=60)
            seen = {"class": type(kc).__name__}
            try:
                left = await kc.get_iopub_msg(timeout=0.5)
                seen["left_over"] = (left["msg_type"], left["content"])
            except Empty:
                seen["left_over"] = None
            msg_id = kc.execute("print('first cell')")
            outputs = []
            while True:
                msg = await kc.get_iopub_msg(timeout=30)
                if msg["parent_header"].get("msg_id") != msg_id:
                    continue
                if msg["msg_type"] == "stream":
                    outputs.append(msg["content"]["text"])
                if is_idle_after(msg, msg_id):
                    break
            seen["outputs"] = outputs
            return seen
        finally:
            kc.stop_channels()
            await km.shutdown_kernel(now=True)


@pytest.mark.notebook
def test_ready_means_the_start_is_read_and_the_first_cell_is_heard(monkeypatch):
    replies = []
    monkeypatch.setattr(ReadyKernelClient, "_handle_kernel_info_reply",
                        lambda self, msg: replies.append(msg["content"]["protocol_version"]))
    seen = _run(_start_and_run())
    assert seen["class"] == ReadyKernelClient.__name__
    assert len(replies) == 1 and int(replies[0].split(".")[0]) >= 5   # handled, once
    assert seen["left_over"] is None, f"unread after ready: {seen['left_over']}"
    assert seen["outputs"] == ["first cell\n"]


@pytest.mark.notebook
def test_a_kernel_that_dies_starting_fails_with_jupyter_client_s_words():
    argv = [sys.executable, "-c", "import sys; sys.exit(1)", "-f", "{connection_file}"]
    with pytest.raises(RuntimeError, match=DIED_STARTING):
        _run(_start_and_run(argv))
