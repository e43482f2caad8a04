"""CURVE keys of a zmq env manager and its workers, and the authenticator that admits workers.

A key directory made by :func:`generate_keys` holds:

- ``server.key`` / ``server.key_secret``: the manager's key pair (workers need ``server.key`` only);
- ``<name>.key`` / ``<name>.key_secret``: a worker's key pair (one per name; the same pair may be
  copied to every worker host, or each host gets its own name);
- ``clients/<name>.key``: the public keys the manager admits; delete one to lock that worker out.

Secret files are readable by their owner only. Without a key directory a manager makes ephemeral
keys in memory for the workers it starts itself (no remote worker can then connect).

>>> import tempfile
>>> with tempfile.TemporaryDirectory() as tmp:
...     _ = generate_keys(tmp)
...     len(load_manager_keys(tmp).allowed), load_worker_keys(tmp).server_public == load_manager_keys(tmp).public
(1, True)
"""

from __future__ import annotations

import dataclasses
import logging
import os
import shutil
from collections.abc import Iterable
from pathlib import Path

import zmq
import zmq.auth
from zmq.auth.thread import ThreadAuthenticator

from ding.envs.env_manager.channels.zmq.refusals import REFUSED_KEY, CountedLog
from ding.errors import ConfigError

SERVER_NAME = "server"
CLIENTS_DIR = "clients"


@dataclasses.dataclass(frozen=True)
class ManagerKeys:
    """The manager's key pair and the client public keys it admits (z85 bytes)."""

    public: bytes
    secret: bytes
    allowed: frozenset[bytes]

    def admitting(self, extra: Iterable[bytes]) -> ManagerKeys:
        return dataclasses.replace(self, allowed=self.allowed | frozenset(extra))


@dataclasses.dataclass(frozen=True)
class WorkerKeys:
    """A worker's key pair and the manager's public key (z85 bytes)."""

    public: bytes
    secret: bytes
    server_public: bytes


def _check_name(name: str) -> None:
    if not name or name == SERVER_NAME or not all(c.isalnum() or c in "-_." for c in name) or name[0] == ".":
        raise ValueError(f"worker key name must be letters, digits, '-', '_' or '.', not {SERVER_NAME!r}; got {name!r}")


def generate_keys(directory: str | os.PathLike[str], name: str = "worker") -> list[Path]:
    """Create the manager's key pair (unless present) and a worker key pair ``name``; return the new files.

    Raises ``FileExistsError`` when the worker key ``name`` exists already.
    """
    _check_name(name)
    root = Path(directory).expanduser()
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    (root / CLIENTS_DIR).mkdir(mode=0o700, exist_ok=True)
    if (root / f"{name}.key_secret").exists():
        raise FileExistsError(f"worker key {name!r} exists already in {root}; choose another name")
    created: list[Path] = []
    if not (root / f"{SERVER_NAME}.key_secret").exists():
        created += [Path(p) for p in zmq.auth.create_certificates(root, SERVER_NAME)]
    public, secret = (Path(p) for p in zmq.auth.create_certificates(root, name))
    authorized = root / CLIENTS_DIR / public.name
    shutil.copyfile(public, authorized)
    created += [public, secret, authorized]
    for path in created:
        os.chmod(path, 0o600 if path.suffix == ".key_secret" else 0o644)
    return created


def _load_pair(path: Path) -> tuple[bytes, bytes]:
    if not path.is_file():
        raise ConfigError(f"CURVE key file {path} does not exist; create keys with `ding -m keygen DIR`")
    try:
        public, secret = zmq.auth.load_certificate(path)
    except (ValueError, OSError) as err:
        raise ConfigError(f"cannot read CURVE key file {path}: {err}") from None
    if secret is None:
        raise ConfigError(f"{path} holds no secret key")
    return public, secret


def load_manager_keys(directory: str | os.PathLike[str]) -> ManagerKeys:
    """The manager's keys from a key directory: its pair and every public key in ``clients/``."""
    root = Path(directory).expanduser()
    public, secret = _load_pair(root / f"{SERVER_NAME}.key_secret")
    allowed = set()
    for path in sorted((root / CLIENTS_DIR).glob("*.key")):
        allowed.add(zmq.auth.load_certificate(path)[0])
    return ManagerKeys(public, secret, frozenset(allowed))


def load_worker_keys(directory: str | os.PathLike[str], name: str = "worker") -> WorkerKeys:
    """A worker's keys from a key directory: its pair ``name`` and the manager's public key."""
    _check_name(name)
    root = Path(directory).expanduser()
    public, secret = _load_pair(root / f"{name}.key_secret")
    server = root / f"{SERVER_NAME}.key"
    if not server.is_file():
        raise ConfigError(f"the manager's public key {server} does not exist; copy it from the manager's key directory")
    return WorkerKeys(public, secret, zmq.auth.load_certificate(server)[0])


def ephemeral_keys() -> tuple[ManagerKeys, WorkerKeys]:
    """A fresh manager key pair and one worker key pair that it admits, in memory only."""
    server_public, server_secret = zmq.curve_keypair()
    client_public, client_secret = zmq.curve_keypair()
    return (
        ManagerKeys(server_public, server_secret, frozenset({client_public})),
        WorkerKeys(client_public, client_secret, server_public),
    )


def manager_keys(keys_dir: str | os.PathLike[str] | None) -> tuple[ManagerKeys, WorkerKeys]:
    """The manager's keys and those of the workers it starts itself (an ephemeral pair it admits).

    Without ``keys_dir`` every key is ephemeral (only the manager's own workers can connect); with it the
    manager uses the directory's pair and admits its listed worker keys too.

    >>> manager, own = manager_keys(None)
    >>> own.public in manager.allowed and own.server_public == manager.public
    True
    """
    keys, own = ephemeral_keys()
    if keys_dir is None:
        return keys, own
    keys = load_manager_keys(keys_dir).admitting([own.public])
    return keys, dataclasses.replace(own, server_public=keys.public)


class _KeyGate(ThreadAuthenticator):
    """ZAP handler admitting only the listed client keys; each refusal is counted with the peer's address."""

    def __init__(self, context: zmq.Context[zmq.Socket[bytes]], allowed: frozenset[bytes], refusals: CountedLog):
        super().__init__(context, log=logging.getLogger("ding.zmq.zap"))
        self.allowed, self.refusals = allowed, refusals
        self._peer = "?"  # the address of the request being handled (one at a time, in the ZAP thread)

    async def handle_zap_message(self, msg: list[bytes]) -> None:
        self._peer = msg[3].decode(errors="replace") if len(msg) > 3 else "?"
        await super().handle_zap_message(msg)

    def callback(self, domain: str, key: bytes) -> bool:
        if key in self.allowed:
            return True
        self.refusals.count(
            REFUSED_KEY,
            self._peer,
            "refused a worker connection from %s: its CURVE public key %s is not admitted",
            self._peer,
            key.decode(errors="replace"),
        )
        return False


def start_authenticator(
    context: zmq.Context[zmq.Socket[bytes]], keys: ManagerKeys, refusals: CountedLog
) -> ThreadAuthenticator:
    """A ZAP handler on ``context`` admitting only ``keys.allowed`` (refusals counted in ``refusals``).

    Stop it when the sockets close.
    """
    auth = _KeyGate(context, keys.allowed, refusals)
    auth.start()
    auth.configure_curve_callback("*", credentials_provider=auth)
    return auth
