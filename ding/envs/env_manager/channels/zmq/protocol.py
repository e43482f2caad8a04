"""The wire format between a zmq env manager and its workers.

Every message is one frame: a fixed 16-byte header, then the payload. The header holds a magic
tag, the protocol version, the message kind, the env group (``slot``) it concerns and a request
id; replies carry the id of their request, so a late or repeated reply is recognised and dropped.

Registration messages (``HELLO``, ``WELCOME``) carry JSON. Request payloads are the subprocess worker's own
messages (pickled commands, numbered step wake-ups, step rows as raw bytes: :mod:`~ding.envs.env_manager.core.rows`);
replies carry step rows as raw bytes and everything else in the data-only codec
(:mod:`~ding.envs.env_manager.core.codec`), which the manager decodes without running anything a peer sent. Both
are only exchanged with peers that passed CURVE authentication and registered.

>>> frame = encode(REPLY, b"payload", slot=3, request_id=7)
>>> message = decode([frame])
>>> (message.kind, message.slot, message.request_id, message.payload)
(7, 3, 7, b'payload')
"""

from __future__ import annotations

import dataclasses
import json
import struct
from collections.abc import Sequence
from typing import Any

from ding.envs.env_manager.core.rows import MalformedMessage

MAGIC = b"DZ"
VERSION = 4
"""4: steps carry their number and replies are data only; 3: commands carry a
:class:`~ding.envs.env_manager.core.commands.CommandKind`; rows only travel raw."""
HEADER = struct.Struct("!2sBBIQ")
"""magic, version, kind, slot, request id."""

HELLO, WELCOME, HEARTBEAT, PING, ASSIGN, REQUEST, REPLY, FORGET, CLOSE = range(1, 10)
KIND_NAMES = {
    HELLO: "HELLO",
    WELCOME: "WELCOME",
    HEARTBEAT: "HEARTBEAT",
    PING: "PING",
    ASSIGN: "ASSIGN",
    REQUEST: "REQUEST",
    REPLY: "REPLY",
    FORGET: "FORGET",
    CLOSE: "CLOSE",
}
TO_MANAGER = frozenset({HELLO, HEARTBEAT, REPLY})
"""Kinds a manager accepts; anything else from a worker is dropped."""
TO_WORKER = frozenset({WELCOME, PING, ASSIGN, REQUEST, FORGET, CLOSE})

HEARTBEAT_SUFFIX = b"~hb"
"""A worker's heartbeat socket has its data socket's routing id plus this suffix."""


@dataclasses.dataclass(frozen=True)
class Message:
    kind: int
    slot: int
    request_id: int
    payload: bytes

    @property
    def kind_name(self) -> str:
        return KIND_NAMES.get(self.kind, str(self.kind))


def encode(kind: int, payload: bytes = b"", slot: int = 0, request_id: int = 0) -> bytes:
    """The frame of one message (one frame: a zmq send per frame is the costly part of a message)."""
    return HEADER.pack(MAGIC, VERSION, kind, slot, request_id) + payload


def decode(frames: Sequence[bytes], accepted: frozenset[int] | None = None) -> Message:
    """Parse the frames of one message; raises :class:`MalformedMessage` naming what is wrong."""
    if len(frames) != 1:
        raise MalformedMessage(f"expected 1 frame, got {len(frames)}")
    frame = frames[0]
    if len(frame) < HEADER.size:
        raise MalformedMessage(f"message of {len(frame)} bytes is shorter than the {HEADER.size}-byte header")
    magic, version, kind, slot, request_id = HEADER.unpack_from(frame)
    if magic != MAGIC:
        raise MalformedMessage(f"bad magic {magic!r}, expected {MAGIC!r}")
    if version != VERSION:
        raise MalformedMessage(f"protocol version {version}, expected {VERSION}")
    if accepted is not None and kind not in accepted:
        raise MalformedMessage(f"message kind {kind} is not accepted here (accepted: {sorted(accepted)})")
    return Message(kind, slot, request_id, frame[HEADER.size :])


def encode_json(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True).encode()


def decode_json(payload: bytes, keys: Sequence[str]) -> dict[str, Any]:
    """A JSON object holding at least ``keys``; raises :class:`MalformedMessage` otherwise."""
    try:
        value = json.loads(payload.decode())
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise MalformedMessage(f"payload is not JSON: {err}") from None
    if not isinstance(value, dict) or any(key not in value for key in keys):
        raise MalformedMessage(f"payload must be a JSON object with keys {list(keys)}, got {value!r:.200}")
    return value
