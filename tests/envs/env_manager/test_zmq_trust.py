"""A worker key lets a zmq peer send data, never code: replies that would run code are refused, the peer dropped.

The hostile worker is a real zmq peer on a real socket, in a thread of the test: it holds a valid worker key,
registers, builds its env group with ding's own worker code and answers honestly until its ``turn``-th step, which
it answers with a payload crafted to run code (a pickle whose ``__reduce__`` creates a marker file). The manager
must refuse it without decoding it as code, drop the peer, end the episodes it ran abnormally, restart its envs on
another worker, keep stepping, and count the refusal.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import zmq

from ding.envs.env_manager import ZmqEnvManager, create_env_manager
from ding.envs.env_manager.channels.zmq.keys import WorkerKeys, load_worker_keys
from ding.envs.env_manager.channels.zmq.protocol import (
    ASSIGN,
    CLOSE,
    FORGET,
    HEARTBEAT,
    HELLO,
    REPLY,
    REQUEST,
    TO_WORKER,
    VERSION,
    decode,
    encode,
    encode_json,
)
from ding.envs.env_manager.channels.zmq.worker import build_group, handle_request
from ding.envs.env_manager.core.replies import StepReply
from ding.envs.env_manager.core.rows import pack_reply
from ding.envs.env_manager.core.sequence import is_step
from ding.envs.env_manager.core.worker import Worker
from ding.errors import EnvStepError
from tests.envs.env_manager.fault_envs import FaultyEnv
from tests.envs.env_manager.zmq_support import free_port, keys_dir, wait_until

__all__ = ["keys_dir"]  # fixture


class Bomb:
    """Unpickling this creates ``path``: proof that a payload was (or was not) decoded as code."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (str(self.path), "w"))


Crafted = Callable[[Worker, Path], bytes]
CRAFTED: dict[str, Crafted] = {
    "a bare pickle": lambda group, marker: pickle.dumps(Bomb(marker)),
    "a pickle as the head of raw rows": lambda group, marker: pack_reply(
        pickle.dumps(Bomb(marker)),
        group.buffers,
        group.rows,  # type: ignore[arg-type]
    ),
    "a pickled StepReply with a bomb for info": lambda group, marker: pack_reply(
        pickle.dumps(StepReply(infos={i: {"x": Bomb(marker)} for i in group.env_ids})),
        group.buffers,  # type: ignore[arg-type]
        group.rows,
    ),
}


class HostileWorker(threading.Thread):
    """A registered zmq worker that serves honestly, then answers its ``turn``-th step with ``crafted``."""

    def __init__(self, endpoint: str, keys: WorkerKeys, crafted: Crafted, marker: Path, turn: int) -> None:
        super().__init__(name="hostile-zmq-worker", daemon=True)
        self.endpoint, self.keys, self.crafted, self.marker, self.turn = endpoint, keys, crafted, marker, turn
        self.identity = f"hostile-{os.getpid()}".encode()
        self.sent = threading.Event()  # the crafted reply went out
        self.forgotten = threading.Event()  # the manager told it to forget its groups (it was dropped)
        self.stop = threading.Event()

    def run(self) -> None:
        context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
        sock = context.socket(zmq.DEALER)
        sock.curve_secretkey, sock.curve_publickey = self.keys.secret, self.keys.public
        sock.curve_serverkey = self.keys.server_public
        sock.setsockopt(zmq.ROUTING_ID, self.identity)
        sock.setsockopt(zmq.LINGER, 0)
        sock.connect(self.endpoint)
        sock.send(encode(HELLO, encode_json({"host": "hostile", "pid": os.getpid(), "version": VERSION})))
        groups: dict[int, Worker] = {}
        steps = 0
        beat = 0.0
        try:
            while not self.stop.is_set() and not self.forgotten.is_set():
                if time.monotonic() - beat > 0.1:
                    beat = time.monotonic()
                    sock.send(encode(HEARTBEAT))  # any message from the worker is a sign of life
                if not sock.poll(20):
                    continue
                message = decode(sock.recv_multipart(), TO_WORKER)
                if message.kind == ASSIGN:
                    group, reply = build_group(message.payload)
                    assert group is not None
                    groups[message.slot] = group
                elif message.kind == REQUEST:
                    group = groups[message.slot]
                    steps += is_step(message.payload)
                    if steps == self.turn and is_step(message.payload) and not self.sent.is_set():
                        group.respond(message.payload)  # the honest step, so the rows are in place
                        reply = self.crafted(group, self.marker)
                        self.sent.set()
                    else:
                        reply = handle_request(group, message.payload)
                elif message.kind in (FORGET, CLOSE):
                    self.forgotten.set()
                    continue
                else:
                    continue
                sock.send(encode(REPLY, reply, message.slot, message.request_id))
        finally:
            for group in groups.values():
                group.close()
            sock.close(0)
            context.term()


@pytest.fixture
def hostile_run(keys_dir: Path, tmp_path: Path, request: pytest.FixtureRequest) -> Any:
    """A zmq manager over tcp with one local worker and the hostile one (each holding one env group)."""
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    marker = tmp_path / "code-ran"
    hostile = HostileWorker(endpoint, load_worker_keys(keys_dir), CRAFTED[request.param], marker, turn=5)
    hostile.start()
    cfg = {"type": "zmq", "endpoint": endpoint, "keys_dir": str(keys_dir), "remote_workers": 1, "local_workers": 1}
    cfg.update(heartbeat_interval=0.1, heartbeat_timeout=2.0, step_timeout=10.0, max_retry=3)
    manager = create_env_manager(cfg, [partial(FaultyEnv, cfg={"episode_len": 50})] * 2)
    try:
        manager.launch()
        yield manager, hostile, marker
    finally:
        manager.close()
        hostile.stop.set()
        hostile.join(10.0)


@pytest.mark.parametrize("hostile_run", list(CRAFTED), indirect=True)
def test_a_reply_crafted_to_run_code_is_refused_and_its_peer_dropped(hostile_run: Any) -> None:
    manager, hostile, marker = hostile_run
    assert isinstance(manager, ZmqEnvManager)
    held = [w["env_ids"] for w in manager.workers if w["id"] == hostile.identity.decode()]
    assert held and held[0], manager.workers  # the hostile peer holds an env group
    abnormal: list[int] = []
    for _ in range(40):
        timesteps = manager.step({i: 0 for i in manager.ready_obs_id})
        abnormal += [i for i, ts in timesteps.items() if ts.info.get("abnormal")]
    assert hostile.sent.is_set()
    assert not marker.exists()  # nothing was decoded as code
    assert manager.refusals.get("undecodable_reply") == 1
    assert hostile.identity.decode() not in [w["id"] for w in manager.workers]  # dropped
    assert wait_until(hostile.forgotten.is_set, 10.0)  # and told so
    assert abnormal == held[0]  # its episodes ended abnormally, once; the other worker's envs kept their steps
    assert sorted(manager.ready_obs_id) == [0, 1]  # its envs run on another worker
    assert all(w["local"] for w in manager.workers)


@pytest.mark.parametrize("manager_type", ["zmq", "subprocess"])
def test_an_info_that_is_not_data_fails_its_env_over_zmq_only(manager_type: str) -> None:
    cfgs = [{}, {"fault": "object_info", "at_step": 2}]
    manager = create_env_manager({"type": manager_type, "max_retry": 1}, [partial(FaultyEnv, cfg=c) for c in cfgs])
    with contextlib.closing(manager):
        manager.launch()
        pids = list(manager.worker_pids)  # type: ignore[attr-defined]
        manager.step({0: 0, 1: 0})
        if manager_type == "subprocess":  # the trainer's own processes: pickle, any object travels
            assert type(manager.step({0: 0, 1: 0})[1].info["handle"]).__name__ == "Handle"
            return
        with pytest.raises(
            EnvStepError, match=r"info\['handle'\] holds a tests\.envs\.env_manager\.fault_envs\.Handle"
        ):
            manager.step({0: 0, 1: 0})
        assert manager.worker_pids == pids  # a failure of the env, not of its worker: nobody was dropped
        assert manager.step({0: 0})[0].obs[0] == 3
