"""Ray managers on a Ray cluster of several nodes, each node in its own network namespace (``ray_netns``).

The trainer runs on the head node (inside its namespace) and joins with ``address=``; the actors ask for a resource
only a worker node has, so every step crosses a veth link. Covered: placement on the worker node, the conformance
and fault suites with remote actors (``ray`` and ``ray`` + ``zmq``), ``shm`` refused for actors it cannot keep on
the trainer's node, a node lost mid-run (its actors restarted on a node that remains, or a clear error when none can
take them), and a config's own env module that exists only in the trainer's folder reaching the remote actors.
Needs root and ``ip netns``: skipped with that reason elsewhere.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.envs.env_manager.conftest import KINDS_VAR, RAY_ADDRESS_VAR, RAY_RESOURCES_VAR
from tests.envs.env_manager.ray_netns import ROOT, RayNetnsCluster, RayNode, netns_missing

REMOTE = "remote_envs"
"""The resource only the worker node offers: actors that ask for it run there."""


@pytest.fixture(scope="module")
def cluster() -> Iterator[RayNetnsCluster]:
    """A head node (the trainer's) and a worker node offering :data:`REMOTE`, each in its own network namespace."""
    pytest.importorskip("ray")
    missing = netns_missing()
    if missing:
        pytest.skip(missing)
    with RayNetnsCluster() as made:
        made.add_node("worker", resources={REMOTE: 1000}, cpus=2)
        yield made


def trainer(cluster: RayNetnsCluster, *args: str, timeout: float = 120.0) -> list[dict[str, Any]]:
    """Run :mod:`remote_trainer` on the head node; its JSON lines (it must exit 0)."""
    command = cluster.command([sys.executable, "-m", "tests.envs.env_manager.remote_trainer", *args])
    result = subprocess.run(command, capture_output=True, text=True, env=cluster.env(), cwd=ROOT, timeout=timeout)
    assert result.returncode == 0, result.stdout + result.stderr[-4000:]
    return [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]


@pytest.mark.parametrize("transport", ["ray", "zmq"])
def test_actors_run_on_the_worker_node_and_play_the_base_managers_trajectories(
    cluster: RayNetnsCluster, transport: str
) -> None:
    (played,) = trainer(cluster, "place", cluster.head_address, transport, REMOTE)
    assert played["namespaces"] == [cluster.nodes[1].namespace] * 2  # two actors of two envs each
    if transport == "zmq":  # the actors connect back to the trainer's node over the link
        assert played["endpoint"].startswith(f"tcp://{cluster.head.address}:")


def test_shm_is_refused_for_actors_that_cannot_run_on_the_trainers_node(cluster: RayNetnsCluster) -> None:
    (refused,) = trainer(cluster, "shm", cluster.head_address, REMOTE)
    assert refused["type"] == "EnvManagerError" and "\n" not in refused["message"]
    message = refused["message"]
    assert "transport 'shm'" in message and cluster.head.address in message and REMOTE in message
    assert "transport 'ray' or 'zmq'" in message


@pytest.mark.slow
def test_conformance_and_fault_suites_pass_with_the_actors_on_the_worker_node(cluster: RayNetnsCluster) -> None:
    suites = [f"tests/envs/env_manager/{name}.py" for name in ("test_conformance", "test_ray_faults")]
    env = {
        **cluster.env(),
        RAY_ADDRESS_VAR: cluster.head_address,
        RAY_RESOURCES_VAR: json.dumps({"CPU": 0, REMOTE: 1}),
        KINDS_VAR: "ray,ray-zmq",
    }
    pytest_args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "", "-k", "not shm"]
    command = cluster.command([*pytest_args, *suites])
    result = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT, timeout=900)
    summary = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert " passed" in summary and "skipped" not in summary and "deselected" in summary, summary


# ----- a node lost ---------------------------------------------------------------------------------------------
class LostNodeRun:
    """A trainer stepping envs whose actors live on ``doomed``; the test kills that node under it."""

    def __init__(self, cluster: RayNetnsCluster, transport: str, resource: str) -> None:
        args = ["lose", cluster.head_address, transport, resource]
        command = cluster.command([sys.executable, "-m", "tests.envs.env_manager.remote_trainer", *args])
        self.process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cluster.env(), cwd=ROOT
        )

    def next_event(self) -> dict[str, Any]:
        """The trainer's next report (Ray's own lines on its stdout are skipped)."""
        assert self.process.stdout is not None
        while line := self.process.stdout.readline():
            if line.startswith("{"):
                return dict(json.loads(line))
        self.process.wait(10)
        assert self.process.stderr is not None
        pytest.fail(f"the trainer ended without a report:\n{self.process.stderr.read()[-4000:]}")

    def finish(self) -> dict[str, Any]:
        event = self.next_event()
        assert self.process.wait(60) == 0
        return event

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def lost_node_runs() -> Iterator[list[LostNodeRun]]:
    runs: list[LostNodeRun] = []
    yield runs
    for run in runs:
        run.kill()


LOST = {
    "ray": r"actor {actor} \(pid \d+, envs {envs}\) died \((unavailable|dead) on node 10\.217\.\d+\.\d+",
    "zmq": r"worker ray-\d+-\w+-{actor}-\d+ \(pid \d+ on \S+\) lost its connection",
}
"""What a lost episode's error says: the actor, its envs and its node (``ray``), or the worker whose link closed."""


def launch_on_a_doomed_node(
    cluster: RayNetnsCluster, transport: str, resource: str, runs: list[LostNodeRun]
) -> tuple[RayNode, LostNodeRun, dict[str, Any]]:
    """A node offering ``resource``, a trainer whose actors need it, and the trainer's first report."""
    doomed = cluster.add_node(f"d{len(cluster.nodes)}", resources={resource: 100})
    run = LostNodeRun(cluster, transport, resource)
    runs.append(run)
    return doomed, run, run.next_event()


@pytest.mark.slow
@pytest.mark.parametrize("transport", ["ray", "zmq"])
def test_a_lost_nodes_envs_end_abnormally_and_restart_on_a_node_that_remains(
    cluster: RayNetnsCluster, transport: str, lost_node_runs: list[LostNodeRun]
) -> None:
    resource = f"lossy_{transport}"
    doomed, run, launched = launch_on_a_doomed_node(cluster, transport, resource, lost_node_runs)
    assert launched["event"] == "launched" and launched["namespaces"] == [doomed.namespace] * 2
    spare = cluster.add_node(f"s{len(cluster.nodes)}", resources={resource: 100})  # joins while the trainer steps
    cluster.kill_node(doomed)
    try:
        report = run.finish()
    finally:
        cluster.kill_node(spare)
    assert report["event"] == "stepped" and report["recovered"], report
    assert report["violations"] == []  # every step exactly once, in order; lost episodes restart at step 0
    for env_id, errors in report["errors"].items():
        assert len(errors) == 1, (env_id, errors)  # one episode lost per env, none leaked or ended twice
        first = int(env_id) // 2 * 2  # envs 0-1 on actor 0, 2-3 on actor 1
        lost = LOST[transport].format(actor=first // 2, envs=re.escape(f"[{first}, {first + 1}]"))
        assert re.search(lost, errors[0]), errors
    assert report["namespaces"] == [spare.namespace] * 2


@pytest.mark.slow
@pytest.mark.parametrize("transport", ["ray", "zmq"])
def test_a_lost_node_that_no_other_node_can_replace_fails_the_run_clearly(
    cluster: RayNetnsCluster, transport: str, lost_node_runs: list[LostNodeRun]
) -> None:
    resource = f"alone_{transport}"
    doomed, run, launched = launch_on_a_doomed_node(cluster, transport, resource, lost_node_runs)
    assert launched["event"] == "launched"
    cluster.kill_node(doomed)
    report = run.finish()
    assert report["event"] == "failed", report
    assert report["type"] in ("WorkerDiedError", "WorkerTimeoutError"), report
    assert "no node" in report["message"] and resource in report["message"], report["message"]


# ----- the user's own env module -------------------------------------------------------------------------------
USER_ENV = '''
"""An env of the user's own, beside the config: not installed, not on the nodes."""
from ding.utils import ENV_REGISTRY
from dizoo.classic_control.cartpole.envs import CartPoleEnv


@ENV_REGISTRY.register("my_cartpole")
class MyCartPole(CartPoleEnv):
    """CartPole under the user's name."""
'''

USER_CONFIG = """
from dizoo.classic_control.cartpole.config.cartpole_dqn_config import main_config, create_config

main_config.exp_name = "remote_cartpole"
main_config.env.manager = dict(
    address={address!r}, num_cpus_per_worker=0, resources_per_worker={{{resource!r}: 1}}, envs_per_worker=4
)
create_config.env = dict(type="my_cartpole", import_names=["my_cartpole"])
create_config.env_manager = dict(type="ray")
"""


def user_run(cluster: RayNetnsCluster, tmp_path: Path, *ding_args: str) -> subprocess.CompletedProcess[str]:
    """``ding -m serial`` run in a folder only the trainer sees: a tmpfs mounted in a mount namespace of its own.

    The nodes' processes cannot see the folder, so the env module reaches their actors only as ding ships it.
    """
    folder = tmp_path / "trainer"
    folder.mkdir()
    setup = (
        'mount -t tmpfs tmpfs "$0" && cd "$0" && printf %s "$1" > my_cartpole.py && printf %s "$2" > my_config.py '
        '&& shift 3 && exec "$@"'
    )
    config = USER_CONFIG.format(address=cluster.head_address, resource=REMOTE)
    ding = str(Path(sys.executable).parent / "ding")
    isolated = ["unshare", "--mount", "--propagation", "private"]
    write_files = ["sh", "-c", setup, str(folder), USER_ENV, config, "-"]
    run = [ding, "-m", "serial", "-c", "my_config.py", *ding_args]
    env = {**cluster.env(), "PYTHONPATH": str(ROOT)}
    command = cluster.command([*isolated, *write_files, *run])
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    assert not any(folder.iterdir())  # the files lived only in the trainer's view of the folder
    return result


def test_an_env_module_only_in_the_trainers_folder_reaches_actors_on_the_worker_node(
    cluster: RayNetnsCluster, tmp_path: Path
) -> None:
    result = user_run(cluster, tmp_path, "--env-step", "64")
    assert result.returncode == 0, result.stderr[-4000:]
    assert "stopped before stop_value 195" in result.stdout + result.stderr


@pytest.mark.slow
def test_dqn_with_collector_envs_on_the_worker_node_reaches_cartpoles_stop_value(
    cluster: RayNetnsCluster, tmp_path: Path
) -> None:
    result = user_run(cluster, tmp_path, "--env-step", "50000")
    assert result.returncode == 0, result.stderr[-4000:]
    assert "reached stop_value 195" in result.stdout + result.stderr, result.stdout[-2000:] + result.stderr[-2000:]
