"""An env's state as a token that puts the env back where it was, and the same for every env of a manager.

A gymnasium env is a chain of layers around a simulator. Its state is the simulator's state, taken the way that
simulator allows, plus the attributes of every layer (frame buffers, counters, running statistics, random
generators, pending actions), plus what the ding env adds (its current time step and episode seeds). Simulators:

=================  ===================================================================================
classic control    ``state`` (and CartPole's ``steps_beyond_terminated``, Pendulum's ``last_u``), the RNG
MuJoCo             a full copy of ``MjData`` (the integration state and the derived quantities a step
                   reads before integrating, such as body positions), the RNG
ALE                ``clone_state(include_rng=True)`` (the emulator and its sticky-action RNG), the RNG
any other          its own ``get_state()`` / ``set_state(state)`` (dm_control's adapter has them)
=================  ===================================================================================

Other simulators (Box2D, for one) are refused with :class:`StateNotSupportedError`. The token is bytes inside: it
crosses processes (subprocess managers pickle it), it never changes once taken, and one token may be restored
any number of times. A state restored and then stepped with the same actions gives the same observations and
rewards as the original.

A token holds pickled env attributes, so restoring one runs whatever its maker put in it. It is therefore sealed
(HMAC-SHA256) with the key of the process that took it (:func:`state_key`), and restored only where that key is
known: the trainer and the worker processes it starts (they inherit the key through ``DING_ENV_STATE_KEY``, or are
given it with their env constructors), never a zmq worker started elsewhere, which has a key of its own. A token
taken by one such worker goes back only to that worker; one from another process, or altered, is refused before
anything in it is unpickled.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import hmac
import io
import os
import pickle
import secrets
from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Protocol

import cloudpickle
import gymnasium as gym

from ding.errors import EnvStateError, StateNotSupportedError

STATE_KEY_VARIABLE = "DING_ENV_STATE_KEY"
"""The environment variable through which a process's state key reaches the processes it starts (hex)."""
_state_key: bytes | None = None


def state_key() -> bytes:
    """This process's key for sealing env state tokens: inherited (``DING_ENV_STATE_KEY``) or made here and set in
    the environment, so worker processes started from now on share it.

    >>> state_key() == state_key() and len(state_key()) == 32
    True
    """
    global _state_key
    if _state_key is None:
        inherited = os.environ.get(STATE_KEY_VARIABLE, "")
        try:
            key = bytes.fromhex(inherited)
        except ValueError:
            key = b""
        _state_key = key if len(key) == 32 else secrets.token_bytes(32)
        os.environ[STATE_KEY_VARIABLE] = _state_key.hex()
    return _state_key


def use_state_key(key: bytes) -> None:
    """Seal and open tokens with ``key`` (a worker given its trainer's key with its env constructors); an empty key
    (none given) keeps this process's own."""
    global _state_key
    if not key:
        return
    if len(key) != 32:
        raise ValueError(f"a state key is 32 bytes, got {len(key)}")
    _state_key = bytes(key)
    os.environ[STATE_KEY_VARIABLE] = _state_key.hex()


def _seal(env: str, layers: tuple[str, ...], simulator: bytes, data: bytes) -> bytes:
    mac = hmac.new(state_key(), digestmod=hashlib.sha256)
    for part in (env.encode(), *(name.encode() for name in layers), simulator, data):
        mac.update(len(part).to_bytes(8, "big"))
        mac.update(part)
    return mac.digest()


@dataclasses.dataclass(frozen=True)
class EnvStateToken:
    """An env's state: ``env`` and ``layers`` name what it was taken from, ``data`` holds it (opaque), ``seal``
    proves which process's key took it."""

    env: str
    layers: tuple[str, ...]
    simulator: bytes
    data: bytes
    seal: bytes = b""

    def __repr__(self) -> str:
        size = len(self.simulator) + len(self.data)
        return f"EnvStateToken({self.env}: {' > '.join(self.layers)}, {size:,} bytes)"


class _Manager(Protocol):
    def call_envs(
        self,
        name: str,
        args: Sequence[Any] = (),
        kwargs: Mapping[str, Any] | None = None,
        env_ids: Sequence[int] | None = None,
    ) -> dict[int, Any]: ...


# ----- simulators ---------------------------------------------------------------------------------------------------
_CLASSIC_FIELDS = ("state", "steps_beyond_terminated", "last_u")


def _is_mujoco(sim: gym.Env[Any, Any]) -> bool:
    try:
        from gymnasium.envs.mujoco.mujoco_env import MujocoEnv
    except ImportError:  # gymnasium without MuJoCo installed: no simulator here is a MuJoCo one
        return False
    return isinstance(sim, MujocoEnv)


def simulator_kind(sim: gym.Env[Any, Any]) -> str | None:
    """How the state of ``sim`` (an unwrapped env) is taken: ``'classic_control'``, ``'mujoco'``, ``'ale'``,
    ``'own'`` (its own ``get_state`` / ``set_state``), or None when it cannot be.

    >>> from gymnasium.envs.classic_control import CartPoleEnv
    >>> from gymnasium.envs.box2d import LunarLander
    >>> simulator_kind(CartPoleEnv()), simulator_kind(LunarLander())
    ('classic_control', None)
    """
    module = type(sim).__module__
    if module.startswith("gymnasium.envs.classic_control."):
        return "classic_control"
    if _is_mujoco(sim):
        return "mujoco"
    if module.startswith("ale_py.") and callable(getattr(sim, "clone_state", None)):
        return "ale"
    if callable(getattr(sim, "get_state", None)) and callable(getattr(sim, "set_state", None)):
        return "own"
    return None


def _rng_state(sim: gym.Env[Any, Any]) -> dict[str, Any]:
    return copy.deepcopy(dict(sim.np_random.bit_generator.state))


def _set_rng_state(sim: gym.Env[Any, Any], state: dict[str, Any]) -> None:
    sim.np_random.bit_generator.state = copy.deepcopy(state)


def _capture_simulator(kind: str, sim: Any) -> Any:
    if kind == "classic_control":
        fields = {name: copy.deepcopy(sim.__dict__[name]) for name in _CLASSIC_FIELDS if name in sim.__dict__}
        return fields, _rng_state(sim)
    if kind == "mujoco":
        return copy.copy(sim.data), _rng_state(sim)  # MjData's copy: a new MjData with every field
    if kind == "ale":
        return sim.clone_state(include_rng=True), _rng_state(sim)
    return sim.get_state()


def _restore_simulator(kind: str, sim: Any, state: Any) -> None:
    if kind == "classic_control":
        fields, rng = state
        for name in _CLASSIC_FIELDS:
            if name in fields:
                setattr(sim, name, copy.deepcopy(fields[name]))
            else:
                sim.__dict__.pop(name, None)
        _set_rng_state(sim, rng)
    elif kind == "mujoco":
        import mujoco

        data, rng = state
        mujoco.mj_copyData(sim.data, sim.model, data)
        _set_rng_state(sim, rng)
    elif kind == "ale":
        emulator, rng = state
        sim.restore_state(emulator)
        _set_rng_state(sim, rng)
    else:
        sim.set_state(state)


# ----- the layers ---------------------------------------------------------------------------------------------------
def env_layers(env: gym.Env[Any, Any]) -> list[gym.Env[Any, Any]]:
    """The layers of a gymnasium env, outermost first, ending with the unwrapped simulator."""
    layers = [env]
    while isinstance(layers[-1], gym.Wrapper):
        layers.append(layers[-1].env)
    return layers


def _pins(layers: list[gym.Env[Any, Any]]) -> dict[Hashable, Any]:
    """The live objects a layer state refers to but does not own, by a key that names them the same way in the
    same env later: the layers themselves, their spaces and the simulator's parts (an emulator, a model)."""
    pins: dict[Hashable, Any] = {("layer", i): layer for i, layer in enumerate(layers)}
    for i, layer in enumerate(layers):
        for name, value in vars(layer).items():
            if isinstance(value, gym.Space):
                pins["space", i, name] = value
    for name, value in vars(layers[-1]).items():
        if not isinstance(value, (bool, int, float, str, bytes, type(None))):
            pins["simulator", name] = value
    return pins


class _PinningPickler(cloudpickle.CloudPickler):
    def __init__(self, file: io.BytesIO, pins: dict[Hashable, Any]) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._keys = {id(obj): key for key, obj in pins.items()}

    def persistent_id(self, obj: Any) -> Hashable | None:  # type: ignore[override]
        key = self._keys.get(id(obj))
        if key is None and callable(obj):  # a method of a pinned object (an emulator's screen reader, say)
            owner = self._keys.get(id(getattr(obj, "__self__", None)))
            if owner is not None:
                return ("method", owner, obj.__name__)
        return key


class _PinningUnpickler(pickle.Unpickler):
    def __init__(self, data: bytes, pins: dict[Hashable, Any]) -> None:
        super().__init__(io.BytesIO(data))
        self._pins = pins

    def persistent_load(self, pid: Any) -> Any:
        method = pid[0] == "method"
        key = pid[1] if method else pid
        if key not in self._pins:
            raise EnvStateError(f"the state refers to {key}, which this env does not have")
        return getattr(self._pins[key], pid[2]) if method else self._pins[key]


def capture_env_state(env: gym.Env[Any, Any], owner: str, extra: Mapping[str, Any]) -> EnvStateToken:
    """The state of the gymnasium env ``env`` and ``extra`` (what its owner adds), as a token.

    ``owner`` names the env in errors; a simulator without state access raises :class:`StateNotSupportedError`.
    """
    layers = env_layers(env)
    sim = layers[-1]
    kind = simulator_kind(sim)
    if kind is None:
        raise StateNotSupportedError(
            f"{owner}: the state of its simulator {type(sim).__module__}.{type(sim).__qualname__} cannot be taken; "
            "supported: gymnasium's classic control and MuJoCo envs, ALE, and simulators with their own "
            "get_state() / set_state() (dm_control's adapter)"
        )
    out = io.BytesIO()
    _PinningPickler(out, _pins(layers)).dump(([vars(layer) for layer in layers[:-1]], dict(extra)))
    simulator = pickle.dumps((kind, _capture_simulator(kind, sim)), protocol=pickle.HIGHEST_PROTOCOL)
    names = tuple(type(layer).__qualname__ for layer in layers)
    data = out.getvalue()
    return EnvStateToken(owner, names, simulator, data, _seal(owner, names, simulator, data))


def restore_env_state(env: gym.Env[Any, Any], owner: str, token: Any) -> dict[str, Any]:
    """Put ``env`` back into the state of ``token`` (from :func:`capture_env_state`); returns the token's ``extra``."""
    if not isinstance(token, EnvStateToken):
        raise EnvStateError(f"{owner}.set_state takes a state from get_state(), got {type(token).__name__}")
    layers = env_layers(env)
    names = tuple(type(layer).__qualname__ for layer in layers)
    if (token.env, token.layers) != (owner, names):
        raise EnvStateError(
            f"{owner}.set_state: the state was taken from {token.env} ({' > '.join(token.layers)}); "
            f"this env is {owner} ({' > '.join(names)})"
        )
    if not hmac.compare_digest(token.seal, _seal(token.env, token.layers, token.simulator, token.data)):
        raise EnvStateError(
            f"{owner}.set_state: the state was not taken by a process this one trusts (a worker started elsewhere, "
            "or the token was altered); a state token holds pickled env attributes, so it is restored only by the "
            "trainer and the workers it started, or by the worker that took it"
        )
    saved, extra = _PinningUnpickler(token.data, _pins(layers)).load()
    kind, simulator = pickle.loads(token.simulator)
    _restore_simulator(kind, layers[-1], simulator)
    for layer, attributes in zip(layers[:-1], saved, strict=True):
        vars(layer).clear()
        vars(layer).update(attributes)
    return dict(extra)


# ----- managers -----------------------------------------------------------------------------------------------------
def snapshot_envs(manager: _Manager, env_ids: Sequence[int] | None = None) -> dict[int, Any]:
    """Every env's state (``env.get_state()``) by env id, wherever the envs run (None: every env)."""
    return manager.call_envs("get_state", env_ids=env_ids)


def restore_envs(manager: _Manager, states: Mapping[int, Any]) -> dict[int, Any]:
    """Restore each env ``env_id`` to ``states[env_id]`` (``env.set_state``); returns each env's current time step
    after it (``env.current_time_step()``: its observation is the one the env's next step starts from)."""
    for env_id, state in states.items():
        manager.call_envs("set_state", (state,), env_ids=[int(env_id)])
    return manager.call_envs("current_time_step", env_ids=[int(i) for i in states])
