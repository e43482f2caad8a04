"""The wire format, and request ids on real sockets: a late or repeated reply is applied once at most."""

from __future__ import annotations

import logging
from typing import Any

import pytest
import zmq

from ding.envs.env_manager.channels.zmq.hub import Hub
from ding.envs.env_manager.channels.zmq.keys import ephemeral_keys
from ding.envs.env_manager.channels.zmq.protocol import (
    HELLO,
    REPLY,
    REQUEST,
    TO_MANAGER,
    VERSION,
    WELCOME,
    MalformedMessage,
    decode,
    encode,
    encode_json,
)
from ding.envs.env_manager.core.failure import Failure


@pytest.mark.parametrize(
    ("frames", "match"),
    [
        ([b"x" * 16, b""], "expected 1 frame, got 2"),
        ([b"short"], "message of 5 bytes is shorter than the 16-byte header"),
        ([b"ZZ" + bytes(14)], "bad magic"),
    ],
)
def test_decode_rejects_malformed_frames(frames: list[bytes], match: str) -> None:
    with pytest.raises(MalformedMessage, match=match):
        decode(frames)


def test_decode_rejects_kinds_not_accepted_here() -> None:
    with pytest.raises(MalformedMessage, match=r"kind 5 is not accepted here \(accepted: \[1, 3, 7\]\)"):
        decode([encode(5, b"")], TO_MANAGER)
    assert decode([encode(REPLY, b"x", 2, 9)], TO_MANAGER).payload == b"x"


@pytest.fixture
def hub_and_peer() -> Any:
    manager_keys, worker_keys = ephemeral_keys()
    hub = Hub("tcp", manager_keys, worker_keys, 0.1, 2.0, 1 << 20)
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    peer = context.socket(zmq.DEALER)
    peer.curve_secretkey, peer.curve_publickey = worker_keys.secret, worker_keys.public
    peer.curve_serverkey = worker_keys.server_public
    peer.setsockopt(zmq.ROUTING_ID, b"peer-1")
    peer.setsockopt(zmq.LINGER, 0)
    peer.connect(hub.endpoint)
    peer.send(encode(HELLO, encode_json({"host": "h", "pid": 1, "version": VERSION})))
    assert hub.wait_for(lambda: b"peer-1" in hub.peers, 10.0, "registration") is None
    assert decode(peer.recv_multipart()).kind == WELCOME
    yield hub, peer
    peer.close()
    context.term()
    hub.shutdown()


def next_request(peer: zmq.Socket[bytes]) -> Any:
    while True:
        message = decode(peer.recv_multipart())
        if message.kind == REQUEST:
            return message


def test_late_and_repeated_replies_are_applied_once_at_most(
    hub_and_peer: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "ding.zmq")
    hub, peer = hub_and_peer
    assert hub.request(0, REQUEST, b"first", identity=b"peer-1") is None
    first = next_request(peer)
    assert hub.collect([0], 0.05) == {
        0: Failure.timeout(f"{hub.peers[b'peer-1'].describe()} did not answer within 0.05 s")
    }
    assert hub.request(0, REQUEST, b"second") is None
    second = next_request(peer)
    assert second.request_id > first.request_id
    peer.send(encode(REPLY, b"late answer to first", 0, first.request_id))
    peer.send(encode(REPLY, b"answer to second", 0, second.request_id))
    peer.send(encode(REPLY, b"answer to second, again", 0, second.request_id))
    assert hub.collect([0], 5.0) == {0: b"answer to second"}
    assert hub.request(0, REQUEST, b"third") is None
    third = next_request(peer)
    assert hub.collect([0], 0.2) == {
        0: Failure.timeout(f"{hub.peers[b'peer-1'].describe()} did not answer within 0.2 s")
    }
    dropped = [r.getMessage() for r in caplog.records if "late or repeated" in r.getMessage()]
    assert len(dropped) == 2, dropped
    peer.send(encode(REPLY, b"answer to third", 0, third.request_id))  # after its timeout: dropped too
    assert hub.request(0, REQUEST, b"fourth") is None
    fourth = next_request(peer)
    peer.send(encode(REPLY, b"answer to fourth", 0, fourth.request_id))
    assert hub.collect([0], 5.0) == {0: b"answer to fourth"}


def test_several_requests_out_are_answered_in_their_order(hub_and_peer: Any) -> None:
    hub, peer = hub_and_peer
    assert hub.request(0, REQUEST, b"first", identity=b"peer-1") is None
    assert hub.request(0, REQUEST, b"second") is None
    first, second = next_request(peer), next_request(peer)
    assert (first.payload, second.payload) == (b"first", b"second")
    assert hub.answered([0], 0.05) == []
    peer.send(encode(REPLY, b"answer to first", 0, first.request_id))
    peer.send(encode(REPLY, b"answer to second", 0, second.request_id))
    assert hub.collect([0], 5.0) == {0: b"answer to first"}
    assert hub.answered([0], 5.0) == [0]  # the second answer is in already
    assert hub.collect([0], 5.0) == {0: b"answer to second"}
    assert hub.answered([0], 0.05) == []
