"""Spaces of envs that do not declare them ahead of time, read from one built instance.

DI-engine's envs state their spaces as properties, set in ``__init__`` or first known after
``reset``. :func:`probe_spaces` builds one such env in a short-lived child process (so the
calling process never initializes the simulator: a process that later forks env workers must not
hold a live simulator), reads its spaces (:func:`read_spaces`), closes it and returns them.

Example:
    >>> from functools import partial
    >>> from ding.envs import DingEnvWrapper
    >>> probe_spaces(partial(DingEnvWrapper, cfg={'env_id': 'CartPole-v1'})).action
    Discrete(2)
"""

from __future__ import annotations

import copy
import functools
import multiprocessing
import pickle
import traceback
from collections.abc import Callable, Hashable, Mapping
from multiprocessing.connection import Connection
from typing import Any

import cloudpickle
import numpy as np
from gymnasium import spaces

from ding.envs.base_env import BaseEnv
from ding.envs.bridges.from_old_gym import convert_space
from ding.envs.spaces import DEFAULT_REWARD_SPACE, EnvSpaces
from ding.errors import EnvSpecError

SpecTrace = list[tuple[str, EnvSpaces]]

PROBE_TIMEOUT = 120.0
"""Seconds a probe may take to build, reset and close the env."""

PROBED_LABEL = "probed by building the env"
"""How ``ding -m spec`` marks spaces that were probed rather than declared."""


def default_probe_context() -> str:
    """``fork`` where the platform has it (fast, and the parent's modules are there), else ``spawn``."""
    return "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"


def _space_or_none(env: Any, name: str) -> spaces.Space[Any] | None:
    try:
        value = getattr(env, name)
    except AttributeError:  # DI-engine envs set their spaces on the first reset
        return None
    return None if value is None else convert_space(value)


def _spaces_now(env: Any) -> EnvSpaces | None:
    obs, act = _space_or_none(env, "observation_space"), _space_or_none(env, "action_space")
    if obs is None or act is None:
        return None
    return EnvSpaces(obs, act, _space_or_none(env, "reward_space") or DEFAULT_REWARD_SPACE)


def read_spaces(env: Any) -> EnvSpaces:
    """The spaces of a built env: its properties, or the same after one ``reset`` if they are not set yet.

    Old-gym spaces are converted to gymnasium's; a missing reward space is DI-engine's default.
    """
    found = _spaces_now(env)
    if found is None:
        env.reset()
        found = _spaces_now(env)
    if found is None:
        raise EnvSpecError(
            f"{type(env).__name__} has no observation_space and action_space even after reset(); "
            "an env must expose both"
        )
    return found


def class_declared_spaces(env: Any) -> EnvSpaces | None:
    """The spaces a built env's class declares for its config, when it declares them and they are the env's own.

    An env built by a factory function (``lambda: SomeEnv(cfg)``) is probed, but if its class states
    its spaces and the instance agrees, a manager may treat it as declared (actions checked, and laid
    out in shared memory). None for DI-engine-style envs and for instances whose spaces differ.

    Example:
        >>> from dizoo.classic_control.cartpole.envs import CartPoleEnv
        >>> class_declared_spaces(CartPoleEnv({})).action
        Discrete(2)
    """
    if not isinstance(env, BaseEnv) or not type(env).declares_spaces():
        return None
    try:
        declared = type(env).spaces_from_config(getattr(env, "_cfg", None) or {})
    except EnvSpecError:  # the class cannot tell from this config (an env given as an instance): probe it
        return None
    return declared if declared == read_spaces(env) else None


def _probe_child(conn: Connection) -> None:
    try:
        env_fn = cloudpickle.loads(conn.recv_bytes())
        env = env_fn()
        try:
            payload = pickle.dumps(read_spaces(env))
        finally:
            close = getattr(env, "close", None)
            if callable(close):
                close()
    except BaseException as exc:  # reported to the parent with its traceback
        payload = pickle.dumps(("error", type(exc).__name__, str(exc), traceback.format_exc()))
    try:
        conn.send_bytes(payload)
    finally:
        conn.close()


def probe_spaces(
    env_fn: Callable[[], Any], *, context: str | None = "auto", timeout: float = PROBE_TIMEOUT
) -> EnvSpaces:
    """Build one env with ``env_fn`` and return its spaces.

    ``context`` is the multiprocessing start method of the child that builds it (``"auto"``:
    :func:`default_probe_context`); ``None`` builds it in this process. A constructor that raises,
    or a child that does not answer within ``timeout`` seconds, raises :class:`EnvSpecError`.
    """
    if context is None:
        env = env_fn()
        try:
            return read_spaces(env)
        finally:
            env.close()
    try:
        env_fn_bytes = cloudpickle.dumps(env_fn)
    except (pickle.PicklingError, TypeError, AttributeError) as err:
        raise EnvSpecError(f"cannot send {_describe(env_fn)} to the process that probes its spaces: {err}") from err
    ctx: Any = multiprocessing.get_context(default_probe_context() if context == "auto" else context)
    parent_conn, child_conn = ctx.Pipe(duplex=True)
    process = ctx.Process(target=_probe_child, args=(child_conn,), name="ding-space-probe", daemon=True)
    process.start()
    child_conn.close()
    try:
        parent_conn.send_bytes(env_fn_bytes)
        if not parent_conn.poll(timeout):
            raise EnvSpecError(f"probing the spaces of {_describe(env_fn)} took longer than {timeout} s")
        result = pickle.loads(parent_conn.recv_bytes())
    except (EOFError, OSError) as err:
        process.join(timeout=5)
        raise EnvSpecError(
            f"the process probing the spaces of {_describe(env_fn)} died (exit code {process.exitcode})"
        ) from err
    finally:
        parent_conn.close()
        if process.is_alive():
            process.kill()
        process.join()
    if isinstance(result, tuple):
        _, exc_type, message, text = result
        raise EnvSpecError(
            f"building {_describe(env_fn)} to read its spaces raised {exc_type}: {message}\n"
            f"--- original traceback ---\n{text}"
        )
    return result


_PROBED: dict[Hashable, EnvSpaces] = {}
_PROBED_MAX = 32


def spec_trace_of(env_cls: Any, cfg: Mapping[str, Any], *, context: str | None = "auto") -> SpecTrace:
    """The spaces after each step of ``env_cls`` made with ``cfg``: declared where the class declares them.

    A class that states no ``raw_spaces`` is built once in a child process (``env_cls(cfg=cfg)``, see
    :func:`probe_spaces`) and its trace is the one step ``"env (probed by building the env)"``; a class that runs
    another env under a chain (``trace_from_probe``, as :class:`~ding.envs.from_config.ChainedEnv`) has that env
    probed and its chain traced from there. The probed spaces are kept for the process, per class and config, so
    compiling a config and then showing its spec builds the env once.
    """
    declares: Callable[[], bool] | None = getattr(env_cls, "declares_spaces", None)
    if declares is not None and declares():
        trace: SpecTrace = env_cls.spec_trace(cfg)
        return trace
    probe = functools.partial(probed_spaces, context=context)
    from_probe: Callable[..., SpecTrace] | None = getattr(env_cls, "trace_from_probe", None)
    if from_probe is None:  # an env constructor that is not a BaseEnv
        return [(f"env ({PROBED_LABEL})", probe(env_cls, cfg))]
    (first, raw), *rest = from_probe(cfg, probe)
    return [(f"{first} ({PROBED_LABEL})", raw), *rest]


def probed_spaces(env_cls: Any, cfg: Mapping[str, Any], *, context: str | None = "auto") -> EnvSpaces:
    """The spaces of ``env_cls(cfg=cfg)``, probed once per process (:func:`probe_spaces`) and then kept."""
    key = (env_cls, _frozen(cfg))
    if key not in _PROBED:
        probed = probe_spaces(functools.partial(env_cls, cfg=cfg), context=context)
        if len(_PROBED) >= _PROBED_MAX:
            del _PROBED[next(iter(_PROBED))]
        _PROBED[key] = probed
    return copy.deepcopy(_PROBED[key])


def _frozen(value: Any) -> Hashable:
    """A hashable stand-in for a config value, equal for equal configs (dict order and EasyDict aside)."""
    if isinstance(value, Mapping):
        return ("map", tuple(sorted((str(key), _frozen(sub)) for key, sub in value.items())))
    if isinstance(value, (list, tuple)):
        return ("seq", tuple(_frozen(sub) for sub in value))
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.shape, value.tobytes())
    try:
        hash(value)
    except TypeError:
        return ("pickled", cloudpickle.dumps(value))
    return (type(value).__name__, value)


def _describe(env_fn: Callable[[], Any]) -> str:
    func = getattr(env_fn, "func", env_fn)
    return getattr(func, "__qualname__", None) or type(env_fn).__name__


__all__ = [
    "PROBED_LABEL",
    "PROBE_TIMEOUT",
    "default_probe_context",
    "probe_spaces",
    "probed_spaces",
    "read_spaces",
    "spec_trace_of",
]
