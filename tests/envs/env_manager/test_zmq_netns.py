"""A worker on a second network stack (a Linux network namespace joined by a veth pair): a real network hop.

The manager binds the host end of the veth link, the worker runs inside the namespace and can
reach the manager only through that link. Needs root and ``ip netns``; where they are missing the
test is skipped with the reason.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest

from ding.envs.env_manager import ZmqEnvManager, create_env_manager
from dizoo.classic_control.cartpole.envs import CartPoleEnv
from tests.envs.env_manager.envs import assert_same_trajectories, play, table_policy
from tests.envs.env_manager.zmq_support import ROOT, RemoteWorkers, free_port, keys_dir, remote_workers

__all__ = ["keys_dir", "remote_workers"]  # fixtures
CARTPOLE = partial(CartPoleEnv, cfg={})


def ip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=False)


@pytest.fixture
def namespace() -> Iterator[tuple[str, str]]:
    """A network namespace linked to this one by a veth pair; yields (namespace, host-side address)."""
    if shutil.which("ip") is None or os.geteuid() != 0:
        pytest.skip("needs root and the ip command to make a network namespace")
    tag = os.getpid() % 100000
    name, host_end, ns_end = f"dingzmq{tag}", f"dzh{tag}", f"dzn{tag}"
    subnet = f"10.213.{tag % 250}"
    made = ip("netns", "add", name)
    if made.returncode != 0:
        pytest.fail(f"root with the ip command, yet ip netns add failed: {made.stderr.strip()}")
    try:
        steps = [
            ("link", "add", host_end, "type", "veth", "peer", "name", ns_end),
            ("link", "set", ns_end, "netns", name),
            ("addr", "add", f"{subnet}.1/24", "dev", host_end),
            ("link", "set", host_end, "up"),
            ("netns", "exec", name, "ip", "addr", "add", f"{subnet}.2/24", "dev", ns_end),
            ("netns", "exec", name, "ip", "link", "set", ns_end, "up"),
            ("netns", "exec", name, "ip", "link", "set", "lo", "up"),
        ]
        for step in steps:
            result = ip(*step)
            assert result.returncode == 0, f"ip {' '.join(step)}: {result.stderr}"
        yield name, f"{subnet}.1"
    finally:
        ip("netns", "del", name)  # removes both ends of the veth pair
        ip("link", "del", host_end)


REACH = """
import socket, sys
try:
    socket.create_connection((sys.argv[1], int(sys.argv[2])), 2).close()
    print("reached")
except OSError as err:
    print(type(err).__name__)
"""


def test_worker_in_another_network_namespace(
    namespace: tuple[str, str], keys_dir: Path, remote_workers: RemoteWorkers
) -> None:
    name, address = namespace
    port = free_port()
    endpoint = f"tcp://{address}:{port}"
    worker = remote_workers.start(endpoint, keys_dir, prefix=("ip", "netns", "exec", name))
    cfg = {"type": "zmq", "endpoint": endpoint, "keys_dir": str(keys_dir), "remote_workers": 1, "episode_num": 2}
    with create_env_manager({**cfg, "heartbeat_interval": 0.2, "heartbeat_timeout": 2.0}, [CARTPOLE] * 2) as manager:
        manager.seed(4)
        manager.launch()
        assert isinstance(manager, ZmqEnvManager) and manager.worker_pids == [worker.pid, worker.pid]
        with create_env_manager({"type": "base", "episode_num": 2}, [CARTPOLE] * 2) as base:
            base.seed(4)
            base.launch()
            expected = play(base, table_policy(2))
        assert_same_trajectories(play(manager, table_policy(2)), expected)
        inside = ["ip", "netns", "exec", name, sys.executable, "-c", REACH]
        across = subprocess.run([*inside, address, str(port)], capture_output=True, text=True, cwd=ROOT)
        loopback = subprocess.run([*inside, "127.0.0.1", str(port)], capture_output=True, text=True, cwd=ROOT)
        assert across.stdout.strip() == "reached"  # the veth hop is the only way in
        assert loopback.stdout.strip() == "ConnectionRefusedError"  # its loopback is not the manager's
    assert worker.wait(10) == 0
