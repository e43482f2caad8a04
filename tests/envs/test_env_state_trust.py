"""An env state token holds pickled env attributes: it is restored only where the process that took it is trusted.

The trainer and the workers it starts share one key (:func:`~ding.envs.env_state.state_key`); a zmq worker started
elsewhere has its own. A token that is altered, or that comes from a process with another key, is refused before
anything in it is unpickled, so no peer can make another run code by handing the trainer a crafted state.
"""

from __future__ import annotations

import dataclasses
import os
import pickle
import socket
import subprocess
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from ding.entry.env_worker import run_keygen
from ding.envs.env_manager import create_env_manager
from ding.envs.env_state import STATE_KEY_VARIABLE, EnvStateError, EnvStateToken, state_key
from ding.errors import EnvStepError
from dizoo.classic_control.cartpole.envs.cartpole_env import CartPoleEnv

ROOT = Path(__file__).resolve().parents[2]


class Bomb:
    """Unpickling this creates ``path``: proof that a token's payload was (or was not) unpickled."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (str(self.path), "w"))


def stepped_cartpole() -> CartPoleEnv:
    env = CartPoleEnv({})
    env.seed(0)
    env.reset()
    env.step(env.random_action())
    return env


def elsewhere_env() -> dict[str, str]:
    """The environment of a process started elsewhere: without this process's state key."""
    return {key: value for key, value in os.environ.items() if key != STATE_KEY_VARIABLE} | {"PYTHONPATH": str(ROOT)}


TAKE_STATE = (
    "import pickle, sys\n"
    "from dizoo.classic_control.cartpole.envs.cartpole_env import CartPoleEnv\n"
    "env = CartPoleEnv({}); env.seed(0); env.reset()\n"
    "sys.stdout.buffer.write(pickle.dumps(env.get_state()))\n"
)


def state_from_a_process(env: dict[str, str]) -> EnvStateToken:
    done = subprocess.run([sys.executable, "-c", TAKE_STATE], capture_output=True, env=env, timeout=120, check=True)
    token = pickle.loads(done.stdout)  # the test's own child: trusted here, to hand the token over
    assert isinstance(token, EnvStateToken)
    return token


def test_an_altered_token_is_refused_before_anything_in_it_is_unpickled(tmp_path: Path) -> None:
    env = stepped_cartpole()
    token = env.get_state()
    marker = tmp_path / "ran"
    for altered in (
        dataclasses.replace(token, data=pickle.dumps(Bomb(marker))),
        dataclasses.replace(token, simulator=pickle.dumps(Bomb(marker))),
        dataclasses.replace(token, seal=b""),
    ):
        with pytest.raises(EnvStateError, match="not taken by a process this one trusts"):
            env.set_state(altered)
    assert not marker.exists()
    env.set_state(token)  # the token as taken still restores


def test_a_token_from_a_process_with_another_key_is_refused_and_a_child_s_is_accepted() -> None:
    state_key()  # this process's key is in its environment from now on
    env = stepped_cartpole()
    with pytest.raises(EnvStateError, match="not taken by a process this one trusts"):
        env.set_state(state_from_a_process(elsewhere_env()))
    env.set_state(state_from_a_process({**os.environ, "PYTHONPATH": str(ROOT)}))  # a process this one started


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_remote_zmq_worker_s_state_goes_back_only_to_that_worker(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    run_keygen(str(keys))
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    command = [sys.executable, "-m", "ding.entry.cli", "-m", "worker", "--connect", endpoint, "--keys", str(keys)]
    workers = [subprocess.Popen(command, env=elsewhere_env(), stderr=subprocess.DEVNULL) for _ in range(2)]
    try:
        cfg = {"type": "zmq", "endpoint": endpoint, "keys_dir": str(keys), "remote_workers": 2, "envs_per_worker": 1}
        with create_env_manager(cfg, [partial(CartPoleEnv, cfg={})] * 2) as manager:
            manager.seed(0)
            manager.launch()
            assert [w["local"] for w in manager.workers] == [False, False]
            manager.step({0: 0, 1: 1})
            states = manager.get_state()
            manager.step({0: 1, 1: 0})
            manager.set_state({0: states[0], 1: states[1]})  # each worker takes back its own
            with pytest.raises(
                EnvStepError, match=r"env 1 raised EnvStateError.*not taken by a process this one trusts"
            ):
                manager.set_state({1: states[0]})  # env 0's worker's state, on env 1's worker
            assert sorted(manager.step({0: 0, 1: 0})) == [0, 1]  # refused before anything changed: both step on
    finally:
        deadline = time.monotonic() + 20
        for worker in workers:
            try:
                worker.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait()
