"""A flood of refused connections writes a few log lines, counts every refusal right, and stepping goes on.

The flood is real traffic on loopback, bounded (it stops by itself): plaintext ZMTP greetings (no CURVE), plaintext
zmq clients, CURVE clients whose keys the manager does not admit, and raw TCP connections that do not speak ZMTP.
Before, each refused handshake wrote one WARNING line and each closed connection one INFO line.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from functools import partial
from pathlib import Path

import zmq

from ding.envs.env_manager import ZmqEnvManager, create_env_manager
from ding.envs.env_manager.channels.zmq.keys import load_worker_keys
from ding.envs.env_manager.channels.zmq.refusals import LINES_PER_INTERVAL, CountedLog
from dizoo.classic_control.cartpole.envs import CartPoleEnv
from tests.envs.env_manager.zmq_support import keys_dir

__all__ = ["keys_dir"]  # fixture
PER_KIND = 150
ZMTP_NULL_GREETING = b"\xff" + bytes(8) + b"\x7f" + b"\x03\x00" + b"NULL".ljust(20, b"\x00") + b"\x00" + bytes(31)
"""A ZMTP 3.0 greeting offering the NULL mechanism: a CURVE server refuses it (mechanism mismatch)."""


def flood(endpoint: str, server_key: bytes, counted: threading.Event) -> None:
    """``PER_KIND`` connections of each refused kind; the zmq clients stay until ``counted`` (or 60 s)."""
    host, port = endpoint[len("tcp://") :].rsplit(":", 1)
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    clients: list[zmq.Socket[bytes]] = []
    try:
        for _ in range(PER_KIND):
            for data in (ZMTP_NULL_GREETING, b"GET / HTTP/1.1\r\n\r\n"):
                with socket.create_connection((host, int(port))) as raw:
                    raw.sendall(data)
            for curve in (False, True):
                client = context.socket(zmq.DEALER)
                client.setsockopt(zmq.LINGER, 0)
                client.setsockopt(zmq.RECONNECT_IVL, -1)  # one attempt each: the counts are exact
                if curve:  # the manager's server key, but a client key it does not admit
                    client.curve_publickey, client.curve_secretkey = zmq.curve_keypair()
                    client.curve_serverkey = server_key
                client.connect(endpoint)
                clients.append(client)
        counted.wait(60.0)  # closed before their handshake, clients would be refused for another reason
    finally:
        for client in clients:
            client.close(0)
        context.term()


def test_a_flood_of_refused_connections_writes_a_few_lines_and_counts_them(keys_dir: Path) -> None:
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    zmq_log = logging.getLogger("ding.zmq")
    zmq_log.addHandler(handler)
    old_level = zmq_log.level
    zmq_log.setLevel(logging.INFO)
    cfg = {"type": "zmq", "endpoint": "tcp", "keys_dir": str(keys_dir), "local_workers": 1, "episode_num": 10**6}
    try:
        with create_env_manager(cfg, [partial(CartPoleEnv, cfg={})] * 2) as manager:
            assert isinstance(manager, ZmqEnvManager)
            manager.launch()
            counted = threading.Event()
            server_key = load_worker_keys(keys_dir).server_public
            flooder = threading.Thread(target=flood, args=(manager.endpoint, server_key, counted))
            flooder.start()
            expected = {"handshake_failed": 2 * PER_KIND, "key_not_admitted": PER_KIND}
            deadline = time.monotonic() + 60.0
            while manager.refusals != expected and time.monotonic() < deadline:  # stepping on through the flood
                manager.step({i: 0 for i in manager.ready_obs_id})
            counted.set()
            flooder.join()
            assert manager.refusals == expected
            assert manager.step({i: 0 for i in manager.ready_obs_id})
            warnings = [r.getMessage() for r in records if r.levelno == logging.WARNING]
            infos = [r.getMessage() for r in records if r.levelno == logging.INFO and "closed" in r.getMessage()]
        closing = [r.getMessage() for r in records][-3:]
    finally:
        zmq_log.removeHandler(handler)
        zmq_log.setLevel(old_level)
    # a few lines per interval (the flood and the wait last a few of them at most), not one per connection
    assert LINES_PER_INTERVAL <= len(warnings) <= 4 * (LINES_PER_INTERVAL + 1), warnings
    assert LINES_PER_INTERVAL <= len(infos) <= 4 * (LINES_PER_INTERVAL + 1), infos
    totals = [line for line in closing if line.startswith("refused connections and messages: 450 in all - ")]
    assert totals and "handshake_failed x300 (tcp://127.0.0.1:" in totals[0], closing
    assert "key_not_admitted x150 (127.0.0.1)" in totals[0]
    assert any(line.startswith("closed connections: ") and " in all - connection_closed x" in line for line in closing)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_counted_log_writes_its_lines_then_sums_up_each_interval_and_its_life() -> None:
    records: list[logging.LogRecord] = []
    logger = logging.getLogger("tests.counted_log")
    logger.addHandler(handler := logging.Handler())
    handler.emit = records.append  # type: ignore[method-assign]
    logger.setLevel(logging.INFO)
    clock = Clock()
    log = CountedLog(logger, "refused things", interval=10.0, lines_per_interval=2, clock=clock)
    try:
        for i in range(5):
            log.count("a", "here", "line %d", i)
        log.count("b", "there", "line b")
        log.flush()  # the interval has not ended: nothing more
        assert [r.getMessage() for r in records] == ["line 0", "line 1"]
        clock.now = 10.0
        log.flush()
        assert records[-1].getMessage() == "refused things: 4 more in the last 10 s - a x3 (here); b x1 (there)"
        log.count("a", "here", "line %d", 9)  # a new interval: its own lines
        assert records[-1].getMessage() == "line 9"
        log.close()
        assert records[-1].getMessage() == "refused things: 7 in all - a x6 (here); b x1 (there)"
        assert log.counts == {"a": 6, "b": 1} and log.counts_by_address == {("a", "here"): 6, ("b", "there"): 1}
    finally:
        logger.removeHandler(handler)


def test_a_counted_log_counts_every_event_of_many_threads() -> None:
    log = CountedLog(logging.getLogger("tests.counted_log.threads"), "events", lines_per_interval=0)
    threads = [threading.Thread(target=lambda: [log.count("x", "y", "x") for _ in range(2000)]) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert log.counts == {"x": 8000}
