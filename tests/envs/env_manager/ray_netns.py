"""A Ray cluster of several nodes on one machine: each node in its own network namespace, started with ``ray start``.

The namespaces hang on one Linux bridge (``10.217.<tag>.0/24``); each has its own address, and Ray's node IP is that
address (``--node-ip-address``). The head node is the trainer's machine: the trainer (a script or pytest run through
:meth:`RayNetnsCluster.command`) runs inside the head's namespace and joins with ``address="<head ip>:6379"``, as a
user runs a trainer on the head node. Worker nodes carry custom resources, so actors that ask for one are placed
only there. Dashboards are off, CPUs and object stores are small.

Needs root and the ``ip`` command (``ip netns``, veth, bridge); :func:`netns_missing` says what is missing, for a
skip. Teardown SIGKILLs the processes of each namespace (``ip netns pids``), never ``ray stop``: that stops every
Ray on the machine, not only this cluster's. A node is lost the same way (:meth:`RayNetnsCluster.kill_node`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
"""The folder that holds ``ding``: on the nodes' PYTHONPATH, as an installed ding would be on every machine."""
RAY = Path(sys.executable).parent / "ray"
HEAD_PORT = 6379
OBJECT_STORE_BYTES = 80 * 1024 * 1024
NODE_CONFIG = {
    # the head notices a lost node after 3 missed health checks 0.5 s apart (defaults: 5 of 3 s, which a user keeps)
    "RAY_health_check_period_ms": "500",
    "RAY_health_check_timeout_ms": "500",
    "RAY_health_check_failure_threshold": "3",
    "RAY_USAGE_STATS_ENABLED": "0",
}


def netns_missing() -> str | None:
    """Why this machine cannot make network namespaces (a skip reason), or None."""
    if shutil.which("ip") is None:
        return "needs the ip command (iproute2) to make network namespaces"
    if os.geteuid() != 0:
        return "needs root to make network namespaces"
    if not RAY.is_file():
        return f"needs Ray's `ray` command beside {sys.executable}"
    return None


def ip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=False)


def _ip_checked(*args: str) -> None:
    result = ip(*args)
    if result.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {result.stderr.strip()}")


@dataclasses.dataclass
class RayNode:
    """One node: its namespace, its address and the resources ``ray start`` gave it."""

    name: str
    namespace: str
    address: str
    resources: dict[str, float]
    temp_dir: str

    def pids(self) -> list[int]:
        """The processes in the node's namespace (its raylet, agents and actors)."""
        result = ip("netns", "pids", self.namespace)
        return [int(pid) for pid in result.stdout.split()]


class RayNetnsCluster:
    """A head node and worker nodes, each in a network namespace of its own (see the module docstring).

    Example (needs root)::

        with RayNetnsCluster() as cluster:
            cluster.add_node("worker", resources={"remote_envs": 100})
            subprocess.run(cluster.command(["python", "train.py", cluster.head_address]))
    """

    def __init__(self, head_cpus: int = 1) -> None:
        self.tag = os.getpid() % 250
        self.prefix = f"dr{os.getpid() % 100000}"
        self.subnet = f"10.217.{self.tag}"
        self.bridge = f"{self.prefix}br"
        self.nodes: list[RayNode] = []
        self._links: list[str] = []
        self._head_cpus = head_cpus
        self._token_dir = tempfile.mkdtemp(prefix="drtoken")
        self.token_path = Path(self._token_dir) / "auth_token"
        """The cluster's own Ray auth token (Ray's token authentication, as users run it: the same token on every
        node and for the trainer)."""
        self.token_path.write_text(secrets.token_hex(32))
        self.token_path.chmod(0o600)

    @property
    def head(self) -> RayNode:
        return self.nodes[0]

    @property
    def head_address(self) -> str:
        """What the trainer passes as ``address=``: the head's GCS."""
        return f"{self.head.address}:{HEAD_PORT}"

    def __enter__(self) -> RayNetnsCluster:
        try:
            _ip_checked("link", "add", "name", self.bridge, "type", "bridge")
            self._links.append(self.bridge)
            _ip_checked("link", "set", self.bridge, "up")
            self.add_node("head", cpus=self._head_cpus)
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def env(self) -> dict[str, str]:
        """The environment of the cluster's processes: ding importable, quick health checks, the cluster's token."""
        path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
        auth = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(self.token_path)}
        return {**os.environ, **NODE_CONFIG, **auth, "PYTHONPATH": path}

    def add_node(self, name: str, resources: Mapping[str, float] | None = None, cpus: int = 1) -> RayNode:
        """Make a namespace on the bridge and start a Ray node in it (the first one is the head)."""
        index = len(self.nodes) + 2
        namespace, outer, inner = f"{self.prefix}{name}", f"{self.prefix}o{index}", f"{self.prefix}i{index}"
        node = RayNode(name, namespace, f"{self.subnet}.{index}", dict(resources or {}), tempfile.mkdtemp(prefix="dr"))
        _ip_checked("netns", "add", namespace)
        self.nodes.append(node)
        _ip_checked("link", "add", outer, "type", "veth", "peer", "name", inner)
        self._links.append(outer)
        for step in (
            ("link", "set", inner, "netns", namespace),
            ("link", "set", outer, "master", self.bridge),
            ("link", "set", outer, "up"),
            ("netns", "exec", namespace, "ip", "addr", "add", f"{node.address}/24", "dev", inner),
            ("netns", "exec", namespace, "ip", "link", "set", inner, "up"),
            ("netns", "exec", namespace, "ip", "link", "set", "lo", "up"),
        ):
            _ip_checked(*step)
        start = [
            str(RAY),
            "start",
            f"--node-ip-address={node.address}",
            f"--num-cpus={cpus}",
            "--num-gpus=0",
            f"--object-store-memory={OBJECT_STORE_BYTES}",
            f"--temp-dir={node.temp_dir}",
            "--disable-usage-stats",
        ]
        if len(self.nodes) == 1:
            start += ["--head", f"--port={HEAD_PORT}", "--include-dashboard=false"]
        else:
            start += [f"--address={self.head_address}"]
        if node.resources:
            start.append(f"--resources={json.dumps(node.resources)}")
        result = subprocess.run(self.command(start, node), capture_output=True, text=True, env=self.env(), cwd="/")
        if result.returncode != 0:
            raise RuntimeError(f"ray start of node {name!r} failed:\n{result.stdout}\n{result.stderr}")
        return node

    def command(self, args: Sequence[str], node: RayNode | None = None) -> list[str]:
        """``args`` run inside a node's namespace (the head's by default: the trainer's machine)."""
        return ["ip", "netns", "exec", (node or self.head).namespace, *args]

    def kill_node(self, node: RayNode, wait: float = 10.0) -> None:
        """Lose a node: SIGKILL every process in its namespace and wait until they are gone."""
        deadline = time.monotonic() + wait
        while (pids := node.pids()) and time.monotonic() < deadline:
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.05)

    def close(self) -> None:
        """Kill every node's processes, then delete the namespaces, links and temp dirs."""
        for node in reversed(self.nodes):
            self.kill_node(node)
        for node in self.nodes:
            ip("netns", "del", node.namespace)
            shutil.rmtree(node.temp_dir, ignore_errors=True)
        for link in self._links:
            ip("link", "del", link)
        self.nodes.clear()
        self._links.clear()
        shutil.rmtree(self._token_dir, ignore_errors=True)
