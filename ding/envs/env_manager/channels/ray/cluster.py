"""Connecting ding's Ray managers to a Ray cluster, and leaving it as they found it.

A manager uses the Ray this process is already connected to. Otherwise it calls ``ray.init`` itself
(``address=None``: start a local Ray, or join the one ``RAY_ADDRESS`` names; an address: join that
cluster) and counts itself as a user of that connection; when the last such manager closes, ding
calls ``ray.shutdown()``, which stops a local Ray it started and disconnects from a remote cluster
(the cluster keeps running). A Ray that was running before any manager needed it is never shut down.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from ding.errors import ConfigError

_lock = threading.Lock()
_users = 0
"""Managers using the Ray connection that ding opened (0: ding opened none)."""


def import_ray() -> Any:
    """``import ray``, or an ImportError that names the extra to install."""
    try:
        import ray
    except ImportError as err:
        raise ImportError(
            "the 'ray' env manager needs Ray; install it with `pip install 'ding[ray]'` (or `pip install ray`)"
        ) from err
    return ray


def _same_address(address: str, gcs_address: str) -> bool:
    if address in ("auto", "local") or address.startswith("ray://"):
        return True  # not comparable with the GCS address: accept the connection that exists
    return address.split("://")[-1] == gcs_address


def connect(address: str | None, init_kwargs: Mapping[str, Any]) -> bool:
    """Make sure this process is connected to Ray; True when ding opened (or shares) the connection.

    Raises:
        ConfigError: this process is already connected to another cluster than ``address``.
    """
    global _users
    ray = import_ray()
    with _lock:
        if ray.is_initialized():
            current = ray.get_runtime_context().gcs_address
            if address is not None and not _same_address(address, current):
                raise ConfigError(
                    f"env.manager.address is {address!r}, but this process is already connected to the Ray "
                    f"cluster at {current!r}; use that address or None"
                )
            if _users == 0:
                return False
            _users += 1
            return True
        ray.init(address=address, **dict(init_kwargs))
        _users = 1
        return True


def release() -> None:
    """One manager that :func:`connect` counted is done; the last one shuts the connection down."""
    global _users
    with _lock:
        if _users == 0:
            return
        _users -= 1
        if _users == 0:
            import ray

            ray.shutdown()


def users() -> int:
    """How many managers use a Ray connection that ding opened.

    >>> users()
    0
    """
    return _users


class Connection:
    """One manager's use of the cluster: :meth:`open` joins (or starts) it once, :meth:`close` leaves it.

    >>> connection = Connection(None, {})
    >>> connection.close()  # never opened: nothing to leave
    >>> connection.counted
    False
    """

    def __init__(self, address: str | None, init_kwargs: Mapping[str, Any]) -> None:
        self.address = address
        self.init_kwargs = {"include_dashboard": False, **dict(init_kwargs)}
        self.counted = False
        """Whether this manager counts as a user of a connection ding opened (then ``close`` releases it)."""

    def open(self) -> None:
        if not self.counted:
            self.counted = connect(self.address, self.init_kwargs)

    def close(self) -> None:
        if self.counted:
            self.counted = False
            release()
