"""A kernel's start until it is ready, with jupyter_client's client and with ours.

Usage::

    python benchmarks/kernel_start.py [--repeat 10]

Starts the ``python3`` kernel ``--repeat`` times with each client, alternating (on Unix
sockets in a fresh folder, as every run does: ``papermill_engine.kernel_socket_dir``),
and times ``start_kernel`` + ``wait_for_ready`` (wall seconds, median and range):

- *jupyter_client*: ``AsyncKernelClient.wait_for_ready``, which ends with an IOPub flush
  that waits until no message has come for 0.2 s;
- *ready_client*: :class:`qencode_nb.executor.ready_client.ReadyKernelClient`, which ends
  when the kernel's idle status after its ``kernel_info_request`` arrives.

Prints both and their ratio, and the kernel process's CPU seconds (the same for both:
what the kernel itself costs).  Wall-clock on a shared machine: compare the ratio.
"""

from __future__ import annotations

import harness  # noqa: I001  (first: pins the BLAS threads before numpy loads)

import argparse
import asyncio
import statistics
import tempfile
import time

CLIENTS = {"jupyter_client": "jupyter_client.asynchronous.AsyncKernelClient",
           "ready_client": "qencode_nb.executor.ready_client.ReadyKernelClient"}


async def one_start(client_class: str) -> tuple[float, float]:
    """``(wall s to ready, kernel CPU s)`` of one kernel started with ``client_class``."""
    import psutil
    from jupyter_client.manager import AsyncKernelManager

    with tempfile.TemporaryDirectory(prefix="qnb-kernel-") as folder:
        km = AsyncKernelManager(kernel_name="python3", transport="ipc",
                                ip=f"{folder}/kernel", client_class=client_class)
        start = time.perf_counter()
        await km.start_kernel(extra_arguments=["--HistoryManager.hist_file=:memory:"])
        kc = km.client()
        kc.start_channels()
        try:
            await kc.wait_for_ready(timeout=60)
            wall = time.perf_counter() - start
            cpu = psutil.Process(km.provisioner.process.pid).cpu_times()
        finally:
            kc.stop_channels()
            await km.shutdown_kernel(now=True)
    return wall, cpu.user + cpu.system


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    asyncio.run(one_start(CLIENTS["jupyter_client"]))          # unmeasured warm-up
    times = {name: [] for name in CLIENTS}
    cpus = {name: [] for name in CLIENTS}
    for _ in range(args.repeat):
        for name, dotted in CLIENTS.items():
            wall, cpu = asyncio.run(one_start(dotted))
            times[name].append(wall)
            cpus[name].append(cpu)
    for name in CLIENTS:
        t = times[name]
        print(f"{name:15s} ready in {statistics.median(t):.3f} s median "
              f"({min(t):.3f}-{max(t):.3f}, {len(t)} starts); kernel CPU "
              f"{statistics.median(cpus[name]):.3f} s")
    ratio = statistics.median(times["jupyter_client"]) / statistics.median(times["ready_client"])
    print(f"ratio jupyter_client / ready_client: {ratio:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
