"""The ray manager: batches per actor, placement, config checks, and which Ray it starts, joins and shuts down.

The conformance suite (``test_conformance.py``) runs against the ``ray`` kind; these tests cover what
is particular to Ray. They share the session's local Ray (``ray_cluster``, which skips them when Ray is
not installed); the tests of starting and joining a Ray run in a child process, which has a Ray
connection of its own. Config checks and the error without Ray need no Ray and always run.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ding.envs.env_manager import create_env_manager
from ding.envs.env_manager.channels.ray import cluster as ray_cluster
from ding.errors import ConfigError, EnvManagerError, WorkerTimeoutError
from dizoo.classic_control.cartpole.envs import CartPoleEnv
from tests.envs.env_manager.conftest import MakeManager, make_manager
from tests.envs.env_manager.envs import DictObsEnv, assert_same_trajectories, pid_alive, play, table_policy
from tests.envs.env_manager.fault_envs import FaultyEnv

ROOT = Path(__file__).resolve().parents[3]
CARTPOLE = partial(CartPoleEnv, cfg={"max_episode_steps": 15})


def undeclared_dict_obs_env() -> DictObsEnv:
    return DictObsEnv({})  # a plain function: the manager learns the spaces from the built envs


@pytest.mark.usefixtures("ray_cluster")
def test_envs_per_actor_step_as_one_batch_and_match_the_serial_manager(new_manager: MakeManager) -> None:
    with make_manager("base", [partial(DictObsEnv, cfg={})] * 5, episode_num=2) as reference:
        reference.seed(3)
        reference.launch()
        expected = play(reference, table_policy(3))
    manager = new_manager("ray", [undeclared_dict_obs_env] * 5, episode_num=2, envs_per_worker=3)
    manager.seed(3)
    manager.launch()
    assert manager.observation_space == reference.observation_space
    pids = manager.worker_pids
    assert len(pids) == 2 and len(set(pids)) == 2  # envs 0-2 on one actor, 3-4 on the other
    assert manager.built_in_pid == [pids[0]] * 3 + [pids[1]] * 2
    assert_same_trajectories(play(manager, table_policy(3)), expected)


@pytest.mark.usefixtures("ray_cluster")
def test_step_batch_matches_per_env_steps(new_manager: MakeManager) -> None:
    batched = new_manager("ray-2", [CARTPOLE] * 4)
    reference = new_manager("base", [CARTPOLE] * 4)
    for manager in (batched, reference):
        manager.seed(0)
        manager.launch()
    ended = 0
    for row in np.random.default_rng(1).integers(0, 2, size=(25, 4)):
        batch = batched.step_batch(row)
        timesteps = reference.step({i: int(a) for i, a in enumerate(row)})
        for env_id, ts in timesteps.items():
            assert batch.done[env_id] == ts.done and batch.reward[env_id] == ts.reward
            np.testing.assert_array_equal(batch.final_obs[env_id] if ts.done else batch.obs[env_id], ts.obs)
            ended += ts.done
    assert ended >= 4
    np.testing.assert_array_equal(batched.ready_obs_batch().obs, reference.ready_obs_batch().obs)


@pytest.mark.usefixtures("ray_cluster")
@pytest.mark.parametrize(
    ("kind", "cfg"),
    [("ray", {"wait_num": 1, "envs_per_worker": 2}), ("ray-shm", {"wait_num": 2, "step_wait_timeout": 0.0001})],
    ids=["ray-wait_num=1", "ray-shm-wait_num=2-short_wait"],
)
def test_partial_batches_keep_every_env_trajectory(kind: str, cfg: dict[str, Any], new_manager: MakeManager) -> None:
    with make_manager("base", [partial(DictObsEnv, cfg={})] * 5, episode_num=2) as reference:
        reference.seed(3)
        reference.launch()
        expected = play(reference, table_policy(3))
    manager = new_manager(kind, [partial(DictObsEnv, cfg={})] * 5, episode_num=2, **cfg)
    manager.seed(3)
    manager.launch()
    assert_same_trajectories(play(manager, table_policy(3)), expected)


@pytest.mark.usefixtures("ray_cluster")
@pytest.mark.parametrize("kind", ["ray", "ray-shm"])
def test_a_partial_batch_leaves_a_hung_actor_in_flight_until_it_comes_back_abnormal(
    kind: str, new_manager: MakeManager, tmp_path: Path
) -> None:
    hangs = partial(FaultyEnv, cfg={"fault": "hang", "at_step": 1, "once_path": str(tmp_path / "fired")})
    manager = new_manager(kind, [hangs] + [partial(FaultyEnv, cfg={})] * 2, wait_num=2, step_timeout=1.5)
    manager.launch()
    hung = manager.worker_pids[0]  # type: ignore[attr-defined]
    timesteps = manager.step({0: 0, 1: 0, 2: 0})
    assert sorted(timesteps) == [1, 2] and not any(ts.done for ts in timesteps.values())
    assert manager.in_flight_env_ids == [0] and manager.ready_obs_id == [1, 2]  # type: ignore[attr-defined]
    steps = {1: 1, 2: 1}
    deadline = time.monotonic() + 30.0
    while 0 not in timesteps and time.monotonic() < deadline:  # envs 1 and 2 keep stepping meanwhile
        timesteps = manager.step({i: 0 for i in manager.ready_obs_id})
        for env_id in timesteps.keys() & {1, 2}:
            steps[env_id] += 1
    assert timesteps[0].done and timesteps[0].info["abnormal"] and "actor 0" in timesteps[0].info["error"]
    assert steps[1] > 1 and steps[2] > 1
    if manager.in_flight_env_ids:  # type: ignore[attr-defined]
        manager.step({})  # collect the other env still in flight
    assert manager.worker_pids[0] != hung and manager.ready_obs_id == [0, 1, 2]  # type: ignore[attr-defined]
    assert manager.ready_obs[0][0] == 0  # a new episode in the restarted actor
    timesteps = manager.step({0: 0, 1: 0, 2: 0})
    while 0 not in timesteps:
        timesteps = manager.step({})
    assert timesteps[0].obs[0] == 1 and not timesteps[0].info.get("abnormal")


@pytest.mark.usefixtures("ray_cluster")
def test_an_actor_ray_cannot_place_fails_launch_naming_the_request() -> None:
    manager = make_manager("ray", [CARTPOLE], resources_per_worker={"ding_test_device": 1}, connect_timeout=0.5)
    pattern = r"actor 0 \(pid None, envs \[0\]\) did not start within 0\.5 s; can Ray place it\? .*ding_test_device"
    with pytest.raises(WorkerTimeoutError, match=pattern):
        manager.launch()
    assert manager.closed and manager.worker_pids == [None]


@pytest.mark.usefixtures("ray_cluster")
def test_actors_hold_their_resources_and_close_kills_them_but_not_a_ray_it_did_not_start() -> None:
    import ray

    manager = make_manager("ray-2", [CARTPOLE] * 4, num_cpus_per_worker=0.5)
    manager.launch()
    pids = manager.worker_pids
    assert all(pid_alive(pid) for pid in pids)
    assert [ray.get(actor.assigned_resources.remote()) for actor in manager.worker_actors] == [{"CPU": 0.5}] * 2
    assert ray_cluster.users() == 0  # the session's Ray was there first: the manager does not count as its user
    manager.close()
    assert not any(pid_alive(pid) for pid in pids)
    assert ray.is_initialized() and ray.get(ray.put(7)) == 7


BAD_CONFIGS: dict[str, tuple[dict[str, Any], type[Exception], str]] = {
    "shared_memory": ({"shared_memory": True}, ConfigError, r"shared_memory must be None or False .*transport 'ray'"),
    "context": ({"context": "spawn"}, ConfigError, r"context does not apply to the ray manager.*got 'spawn'"),
    "address": ({"address": 6379}, TypeError, r"address must be a str such as 'host:6379' or None, got 6379"),
    "num_cpus": ({"num_cpus_per_worker": -1}, ConfigError, r"num_cpus_per_worker must be a number >= 0 .*got -1"),
    "resources": ({"resources_per_worker": {"GPU": "one"}}, ConfigError, r"\['GPU'\] must be a number >= 0"),
    "resources_type": ({"resources_per_worker": 2}, ConfigError, r"resources_per_worker' must be a dict .*got int 2"),
    "cpu_twice": (
        {"num_cpus_per_worker": 1, "resources_per_worker": {"CPU": 1}},
        ConfigError,
        r"either as num_cpus_per_worker or as resources_per_worker\['CPU'\]",
    ),
    "max_restarts": ({"max_restarts": -2}, ConfigError, r"max_restarts must be an int >= -1 .*got -2"),
    "init_address": ({"init_kwargs": {"address": "auto"}}, ConfigError, r"init_kwargs may not hold 'address'"),
}


@pytest.mark.parametrize("case", sorted(BAD_CONFIGS))
def test_bad_ray_settings_name_the_key_and_value(case: str) -> None:
    cfg, error, pattern = BAD_CONFIGS[case]
    with pytest.raises(error, match=pattern):
        create_env_manager({"type": "ray", **cfg}, [CARTPOLE])


def test_another_cluster_address_than_the_connected_one_is_rejected(ray_cluster: str) -> None:
    manager = make_manager("ray", [CARTPOLE], address="127.0.0.1:1")
    with pytest.raises(ConfigError, match=rf"address is '127\.0\.0\.1:1', but .* cluster at '{ray_cluster}'"):
        manager.launch()
    manager.close()


OWN_RAY = textwrap.dedent(
    """
    import sys
    from functools import partial
    import ray
    from ding.envs.env_manager import create_env_manager
    from dizoo.classic_control.cartpole.envs import CartPoleEnv

    fns = [partial(CartPoleEnv, cfg={})] * 2

    def run(**cfg):
        manager = create_env_manager({"type": "ray", "episode_num": 1, **cfg}, fns)
        manager.launch()
        while not manager.done:
            manager.step({i: 0 for i in manager.ready_obs_id})
        return manager

    assert not ray.is_initialized()
    first = run(init_kwargs={"num_cpus": 1})  # starts a local Ray of its own
    started = ray.get_runtime_context().gcs_address
    second = run()  # shares it
    first.close()
    print("after first close:", ray.is_initialized())
    second.close()
    print("after last close:", ray.is_initialized())
    joined = run(address=sys.argv[1])  # joins the test session's cluster
    print("joined:", ray.get_runtime_context().gcs_address == sys.argv[1] != started)
    joined.close()
    print("after leaving:", ray.is_initialized())
    """
)


def test_a_manager_starts_or_joins_ray_and_shuts_down_only_its_own_connection(ray_cluster: str) -> None:
    import ray

    result = subprocess.run(
        [sys.executable, "-c", OWN_RAY, ray_cluster], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split("\n")[:4] == [
        "after first close: True",
        "after last close: False",
        "joined: True",
        "after leaving: False",
    ]
    assert ray.get(ray.put("still up")) == "still up"  # the session's cluster outlived the child's managers


WITHOUT_RAY = textwrap.dedent(
    """
    import sys
    sys.modules["ray"] = None  # as if Ray were not installed
    from functools import partial
    from ding.envs.env_manager import create_env_manager
    from dizoo.classic_control.cartpole.envs import CartPoleEnv
    create_env_manager({"type": "base"}, [partial(CartPoleEnv, cfg={})]).close()
    try:
        create_env_manager({"type": "ray"}, [partial(CartPoleEnv, cfg={})])
    except ImportError as err:
        print(err)
    """
)


def test_ding_works_without_ray_and_names_the_extra_when_the_ray_manager_is_asked_for() -> None:
    result = subprocess.run([sys.executable, "-c", WITHOUT_RAY], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "pip install 'ding[ray]'" in result.stdout


# ----- the zmq transport ---------------------------------------------------------------------------------------------
ZMQ_BAD_CONFIGS: dict[str, tuple[dict[str, Any], str]] = {
    "transport": ({"transport": "grpc"}, r"transport must be one of 'ray', 'zmq', 'shm', got 'grpc'"),
    "endpoint": ({"transport": "zmq", "endpoint": "ipc"}, r"endpoint must be None .* or 'tcp://HOST:PORT' .*got 'ipc'"),
    "heartbeat": (
        {"transport": "zmq", "heartbeat_timeout": 0.5},
        r"heartbeat_timeout \(0\.5\) must exceed heartbeat_interval \(1\.0\)",
    ),
    "shared_memory": ({"transport": "zmq", "shared_memory": True}, r"shared_memory must be None or False"),
}


@pytest.mark.parametrize("case", sorted(ZMQ_BAD_CONFIGS))
def test_bad_transport_settings_name_the_key_and_value(case: str) -> None:
    cfg, pattern = ZMQ_BAD_CONFIGS[case]
    with pytest.raises(ConfigError, match=pattern):
        create_env_manager({"type": "ray", **cfg}, [CARTPOLE])


def test_each_transport_class_refuses_the_other_transport() -> None:
    from ding.envs.env_manager import RayZmqEnvManager
    from ding.envs.env_manager.channels.ray.manager import RayEnvManager

    with pytest.raises(ConfigError, match=r"runs transport 'zmq', got 'ray'; .*'transport': 'ray'"):
        RayZmqEnvManager([CARTPOLE], {"transport": "ray"})
    with pytest.raises(ConfigError, match=r"runs transport 'ray', got 'zmq'; .*'transport': 'zmq'"):
        RayEnvManager([CARTPOLE], {"transport": "zmq"})


@pytest.mark.usefixtures("ray_cluster")
def test_zmq_transport_an_actor_ray_cannot_place_fails_launch_naming_the_request() -> None:
    manager = make_manager("ray-zmq", [CARTPOLE], resources_per_worker={"ding_test_device": 1}, connect_timeout=0.5)
    pattern = r"actor 0 \(pid None, envs \[0\]\) did not start within 0\.5 s; can Ray place it\? .*ding_test_device"
    with pytest.raises(WorkerTimeoutError, match=pattern):
        manager.launch()
    assert manager.closed and manager.worker_pids == [None] and manager.worker_actors == [None]  # type: ignore


@pytest.mark.usefixtures("ray_cluster")
def test_zmq_transport_actors_hold_their_resources_and_close_kills_them_but_not_ray() -> None:
    import ray

    manager = make_manager("ray-zmq", [CARTPOLE] * 4, num_cpus_per_worker=0.5, envs_per_worker=2)
    manager.launch()
    pids = manager.worker_pids
    assert len(set(pids)) == 2 and all(pid_alive(pid) for pid in pids)
    assert [ray.get(actor.assigned_resources.remote()) for actor in manager.worker_actors] == [{"CPU": 0.5}] * 2
    assert ray_cluster.users() == 0
    manager.close()
    assert not any(pid_alive(pid) for pid in pids) and manager.worker_actors == [None, None]  # type: ignore
    assert ray.is_initialized() and ray.get(ray.put(7)) == 7


@pytest.mark.usefixtures("ray_cluster")
def test_zmq_transport_steps_over_curve_and_admits_only_its_own_key(new_manager: MakeManager) -> None:
    import zmq

    manager = new_manager("ray-zmq", [CARTPOLE] * 4, envs_per_worker=2)
    manager.seed(0)
    manager.launch()
    endpoint = manager.endpoint  # type: ignore[attr-defined]
    assert endpoint.startswith("tcp://127.0.0.1:")  # a one-node cluster: loopback
    local = manager.channel.hub.local_endpoint  # type: ignore[attr-defined]
    if sys.platform.startswith("linux"):  # actors on this host use the abstract ipc address: its listener + 2 per actor
        name = local[len("ipc://") :]
        with open("/proc/net/unix") as table:
            assert sum(line.rstrip().endswith(" " + name) for line in table) == 1 + 2 * 2
    workers = manager.workers  # type: ignore[attr-defined]
    pids = manager.worker_pids
    assert sorted((w["env_ids"], w["pid"]) for w in workers) == [([0, 1], pids[0]), ([2, 3], pids[1])]
    # a client with the right server key but a key pair of its own is refused by the CURVE handshake
    context = zmq.Context()
    public, secret = zmq.curve_keypair()
    intruder = context.socket(zmq.DEALER)
    intruder.curve_publickey, intruder.curve_secretkey = public, secret
    intruder.curve_serverkey = manager.channel.hub.local_keys.server_public  # type: ignore[attr-defined]
    intruder.setsockopt(zmq.LINGER, 0)
    intruder.connect(endpoint)
    from ding.envs.env_manager.channels.zmq.protocol import HELLO, VERSION, encode, encode_json

    intruder.send(encode(HELLO, encode_json({"host": "x", "pid": 1, "version": VERSION})))
    local_intruder = context.socket(zmq.DEALER)  # the ipc address admits the same key only
    local_intruder.curve_publickey, local_intruder.curve_secretkey = public, secret
    local_intruder.curve_serverkey = manager.channel.hub.local_keys.server_public  # type: ignore[attr-defined]
    local_intruder.setsockopt(zmq.LINGER, 0)
    if local is not None:
        local_intruder.connect(local)
        local_intruder.send(encode(HELLO, encode_json({"host": "y", "pid": 2, "version": VERSION})))
    for _ in range(5):
        manager.step({i: 0 for i in manager.ready_obs_id})
    assert len(manager.workers) == 2 and not intruder.poll(200)  # type: ignore[attr-defined]
    assert not local_intruder.poll(50)
    intruder.close()
    local_intruder.close()
    context.term()


# ----- the shm transport ---------------------------------------------------------------------------------------------
def test_shm_transport_refuses_private_buffers_and_other_transports() -> None:
    from ding.envs.env_manager import RayShmEnvManager

    with pytest.raises(ConfigError, match=r"shared_memory must be None or True .*transport 'shm'.*got False"):
        create_env_manager({"type": "ray", "transport": "shm", "shared_memory": False}, [CARTPOLE])
    with pytest.raises(ConfigError, match=r"runs transport 'shm', got 'zmq'; .*'transport': 'zmq'"):
        RayShmEnvManager([CARTPOLE], {"transport": "zmq"})


@pytest.mark.usefixtures("ray_cluster")
def test_shm_transport_an_actor_ray_cannot_place_fails_launch_naming_the_request() -> None:
    manager = make_manager("ray-shm", [CARTPOLE], resources_per_worker={"ding_test_device": 1}, connect_timeout=0.5)
    pattern = (
        r"transport 'shm' keeps actors on the trainer's node \S+ \(Ray node \w+\), but actor 0 \(envs \[0\]\) asks "
        r"for .*ding_test_device.* and this node has .*CPU.*; use transport 'ray' or 'zmq' for actors on other nodes"
    )
    with pytest.raises(EnvManagerError, match=pattern):
        manager.launch()
    assert manager.closed and manager.worker_pids == [None] and manager.worker_actors == [None]  # type: ignore


@pytest.mark.usefixtures("ray_cluster")
def test_shm_transport_actors_on_this_node_share_memory_and_close_frees_everything_but_ray() -> None:
    import ray

    manager = make_manager("ray-shm", [CARTPOLE] * 4, num_cpus_per_worker=0.5, envs_per_worker=2)
    manager.launch()
    pids = manager.worker_pids
    assert len(set(pids)) == 2 and all(pid_alive(pid) for pid in pids)
    assert [ray.get(actor.assigned_resources.remote()) for actor in manager.worker_actors] == [{"CPU": 0.5}] * 2
    segments = manager.shared_memory_names
    assert segments and all(Path("/dev/shm", name).exists() for name in segments)
    batch = manager.step_batch(np.zeros(4, dtype=np.int64))
    assert batch.obs.shape == (4, 4) and not batch.done.any()
    manager.close()
    assert not any(pid_alive(pid) for pid in pids) and manager.worker_actors == [None, None]  # type: ignore
    assert not any(Path("/dev/shm", name).exists() for name in segments)
    assert ray_cluster.users() == 0 and ray.is_initialized() and ray.get(ray.put(7)) == 7


@pytest.mark.usefixtures("ray_cluster")
def test_shm_transport_turns_away_a_local_client_without_the_key(new_manager: MakeManager) -> None:
    import os
    import signal
    import socket

    manager = new_manager("ray-shm", [CARTPOLE] * 2, envs_per_worker=1, max_retry=2)
    manager.seed(0)
    manager.launch()
    address = manager.local_address  # type: ignore[attr-defined]
    assert address.startswith("\0ding-ray-shm-")
    with open("/proc/net/unix") as table:  # the listener and one connection per actor
        assert sum(line.rstrip().endswith(" @" + address[1:]) for line in table) == 1 + 2
    intruder = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    intruder.connect(address)  # waits in the backlog until the manager next takes connections
    intruder.sendall(len(b"let me in").to_bytes(4, "big") + b"let me in")
    os.kill(manager.worker_pids[0], signal.SIGKILL)  # type: ignore[attr-defined]
    timesteps = manager.step({0: 1, 1: 0})  # actor 0's restart takes connections: the intruder's comes first
    assert timesteps[0].info["abnormal"] and not timesteps[1].done
    intruder.settimeout(10.0)
    received = b""
    while chunk := intruder.recv(4096):
        received += chunk
    intruder.close()
    assert b"#CHALLENGE#" in received and received.endswith(b"#FAILURE#")  # challenged, refused, disconnected
    steps = [manager.step({0: 1, 1: 0}) for _ in range(3)]
    assert [s[1].obs.shape for s in steps] == [(4,)] * 3 and not any(s[0].info.get("abnormal") for s in steps)
