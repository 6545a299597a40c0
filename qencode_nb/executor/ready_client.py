"""A kernel client that is ready as soon as its kernel is, with no fixed wait.

jupyter_client's ``KernelClient.wait_for_ready`` (8.x, ``client.py``) sends
``kernel_info_request`` until it has a reply and one IOPub message, then flushes IOPub
until no message has come for 0.2 s: every run pays that 0.2 s idle (a whole-record
replay's 139 runs, 28 run-seconds; ``benchmarks/kernel_start.py``).  This client ends the
wait on an event instead: the kernel publishes ``status: idle`` on IOPub, with the
request as its parent, after it has handled a shell request (the Jupyter messaging
protocol, "Kernel status"), so once that message of the last ``kernel_info_request``
has arrived IOPub is connected and everything the kernel published before it (its
``starting`` status, ``iopub_welcome``) has been read.  A later stray message would be
ignored anyway: nbclient reads only the messages whose parent is the cell it runs.

What the wait checks is otherwise jupyter_client's: a reply on the shell channel, IOPub
connected (else the request is sent again: a subscriber that joined late misses
messages), the kernel alive, the timeout.  A kernel whose IOPub answers but that reports
no idle after ``kernel_info`` within :data:`IOPUB_CHECK_S` gets jupyter_client's own
flush, so no kernel waits longer than it did before.
"""

from __future__ import annotations

import asyncio
import time
from queue import Empty

from jupyter_client.asynchronous import AsyncKernelClient

from qencode_nb.executor.papermill_engine import DIED_STARTING

#: How long after the ``kernel_info_reply`` the client waits for that request's idle
#: status on IOPub before it takes IOPub as not yet connected and asks again (s):
#: jupyter_client's own check waits as long for any IOPub message.
IOPUB_CHECK_S = 0.2


def is_idle_after(msg: dict, msg_id: str) -> bool:
    """Whether ``msg`` (an IOPub message) is the kernel's ``status: idle`` after the
    request ``msg_id``."""
    return (msg.get("msg_type") == "status"
            and msg.get("parent_header", {}).get("msg_id") == msg_id
            and msg.get("content", {}).get("execution_state") == "idle")


class ReadyKernelClient(AsyncKernelClient):
    """jupyter_client's asynchronous client whose :meth:`wait_for_ready` returns when the
    kernel reports idle after its ``kernel_info_request`` (module docstring)."""

    async def _iopub_after(self, msg_id: str, deadline: float) -> str:
        """Read IOPub until the idle status of ``msg_id`` (``"idle"``) or ``deadline``
        (``time.monotonic()``): ``"heard"`` when other messages came, else ``"silent"``."""
        heard = False
        while (left := deadline - time.monotonic()) > 0:
            try:
                msg = await self.iopub_channel.get_msg(timeout=left)
            except Empty:
                break
            if is_idle_after(msg, msg_id):
                return "idle"
            heard = True
        return "heard" if heard else "silent"

    async def _flush_iopub(self) -> None:
        """jupyter_client's flush: read IOPub until no message has come for
        :data:`IOPUB_CHECK_S`."""
        while True:
            try:
                await self.iopub_channel.get_msg(timeout=IOPUB_CHECK_S)
            except Empty:
                return

    async def wait_for_ready(self, timeout: float | None = None) -> None:
        """Wait until the kernel answers ``kernel_info`` and its IOPub is connected.

        Args:
            timeout: seconds (None: no limit).

        Raises:
            RuntimeError: the kernel died before replying (``Kernel died before replying
                to kernel_info``, jupyter_client's words, which a restart looks for) or
                did not reply within ``timeout`` (``Kernel didn't respond in N seconds``).
        """
        limit = float("inf") if timeout is None else timeout
        abs_timeout = time.monotonic() + limit
        from jupyter_client.manager import KernelManager

        if not isinstance(self.parent, KernelManager):
            while not await self._async_is_alive():     # as jupyter_client: heartbeats
                if time.monotonic() > abs_timeout:
                    raise RuntimeError("Kernel didn't respond to heartbeats in %d seconds "
                                       "and timed out" % limit)
                await asyncio.sleep(0.2)
        while True:
            msg_id = self.kernel_info()
            try:
                reply = await self.shell_channel.get_msg(timeout=1)
            except Empty:
                reply = None
            if reply is not None and reply["msg_type"] == "kernel_info_reply":
                heard = await self._iopub_after(reply["parent_header"].get("msg_id", msg_id),
                                                time.monotonic() + IOPUB_CHECK_S)
                if heard != "silent":       # IOPub connected
                    if heard == "heard":    # a kernel that reported no idle: as jupyter_client
                        await self._flush_iopub()
                    self._handle_kernel_info_reply(reply)
                    return
            if not await self._async_is_alive():
                raise RuntimeError(DIED_STARTING)
            if time.monotonic() > abs_timeout:
                raise RuntimeError("Kernel didn't respond in %d seconds" % limit)
