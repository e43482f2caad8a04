"""stable-baselines3 on ding's envs: ``SB3VecEnv``, an SB3 ``VecEnv`` over any ding env manager.

Needs the ``sb3`` extra (``pip install 'ding[sb3]'``, which brings ``stable-baselines3``). Every manager
kind works (in-process, subprocess, async, zmq, Ray): a step sends every env its action and waits for
all of them. SB3's conventions hold: an env whose episode ends is reset in the same step, its last
observation is ``infos[i]['terminal_observation']``, ``infos[i]['TimeLimit.truncated']`` marks an
episode cut short (truncated, not terminated), rewards are float32 and observations keep the dtypes of
the envs' spec. An abnormal step (an env fault the manager recovered from) ends the episode as a
truncation, with ``info['abnormal']`` and ``info['error']`` as the manager reports them.

Seeding is SB3's: ``seed(s)`` gives env ``i`` the seed ``s + i`` at the next ``reset()``, and each env
then draws its episode seeds from its own stream (see :mod:`ding.envs.values.seeding`). Episode statistics
for SB3's logs come from ``stable_baselines3.common.vec_env.VecMonitor`` around this VecEnv.

Dict and Tuple action spaces are refused: SB3's algorithms act in Box, Discrete, MultiDiscrete and MultiBinary spaces
only, and ding's managers step array actions.

A single ding env goes to SB3 as :class:`ding.envs.bridges.to_gymnasium.GymnasiumEnv` (SB3 wraps it itself),
or as this VecEnv over a manager of one env.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from ding.envs.bridges.from_gymnasium import DingEnvWrapper
from ding.envs.env_manager import BaseEnvManager, create_env_manager
from ding.envs.env_manager.env_fn import EnvFn
from ding.envs.env_manager.fanout import METHOD, MISSING
from ding.errors import EnvManagerError

try:
    from stable_baselines3.common.vec_env import VecEnv
    from stable_baselines3.common.vec_env.base_vec_env import VecEnvObs, VecEnvStepReturn
except ImportError as err:  # the optional extra is not installed
    raise ImportError(
        "ding.envs.bridges.to_sb3 needs stable-baselines3: pip install 'ding[sb3]' (or stable-baselines3)"
    ) from err

SB3_ACTION_SPACES = (spaces.Box, spaces.Discrete, spaces.MultiDiscrete, spaces.MultiBinary)
"""The action spaces SB3's algorithms act in."""

Indices = int | Iterable[int] | None


class SB3VecEnv(VecEnv):
    """A ding env manager as a stable-baselines3 ``VecEnv``; it owns the manager (``close()`` closes it).

    The manager is launched here when it is not (so env attributes can be read at once); ``reset()``
    resets every env, applying the seeds and options set since the last reset.

    Args:
        manager: The env manager to drive; its envs must take array actions (SB3's action spaces) and
            give one reward value per step. Observations are copied out of it (SB3 holds each batch
            across the next step, while a manager's shared memory is rewritten by it).

    Example:
        >>> from functools import partial
        >>> from ding.envs import DingEnvWrapper
        >>> env_fn = partial(DingEnvWrapper, cfg={'env_id': 'CartPole-v1'})
        >>> venv = SB3VecEnv(BaseEnvManager([env_fn] * 2))
        >>> venv.seed(0)
        [0, 1]
        >>> obs = venv.reset()
        >>> obs.shape, obs.dtype
        ((2, 4), dtype('float32'))
        >>> obs, rewards, dones, infos = venv.step(np.array([0, 1]))
        >>> rewards, dones, infos[0]['TimeLimit.truncated']
        (array([1., 1.], dtype=float32), array([False, False]), False)
        >>> venv.close()
    """

    def __init__(self, manager: BaseEnvManager) -> None:
        if not isinstance(manager, BaseEnvManager):
            raise TypeError(f"SB3VecEnv takes a ding env manager, got {type(manager).__name__}")
        env_spaces = manager.env_spaces
        if not isinstance(env_spaces.action, SB3_ACTION_SPACES):
            raise TypeError(
                f"SB3VecEnv needs an action space SB3 acts in ({', '.join(s.__name__ for s in SB3_ACTION_SPACES)}), "
                f"got {env_spaces.action}"
            )
        reward_shape = tuple(env_spaces.reward.shape or (1,))
        if int(np.prod(reward_shape)) != 1:
            raise ValueError(f"SB3VecEnv needs one reward value per step (shape (1,) or ()), got shape {reward_shape}")
        self._manager = manager
        self._waiting = False
        if not manager.launched:
            manager.launch()
        _check_distinct_envs(manager)
        super().__init__(manager.env_num, env_spaces.observation, env_spaces.action)

    @property
    def manager(self) -> BaseEnvManager:
        """The driven env manager."""
        return self._manager

    @property
    def envs(self) -> list[Any]:
        """The ding envs, where they run in this process (a ``base`` manager), as SB3's ``DummyVecEnv.envs``; a
        manager whose envs run in workers raises ``AttributeError``."""
        envs = self._manager.in_process_envs()
        if envs is None:
            raise AttributeError(
                f"the {self._manager.manager_type} manager's envs run in its workers, not in this process: reach them "
                "with get_attr, set_attr and env_method"
            )
        return envs

    # ----- stepping -------------------------------------------------------------------------------
    def reset(self) -> VecEnvObs:
        """Reset every env (with the seeds of :meth:`seed` and the options of ``set_options``, once: each env's
        ``reset(options=...)``, as SB3 passes them)."""
        manager = self._manager
        if self._waiting:  # SB3: a reset cancels a step in progress
            manager.step_wait()
            self._waiting = False
        seeds = {env_id: seed for env_id, seed in enumerate(self._seeds) if seed is not None}
        if seeds:
            manager.seed(seeds)
        options = [{"options": dict(given)} if given else {} for given in self._options]  # as SB3's DummyVecEnv
        manager.reset(dict(enumerate(options)))
        self._reset_seeds()
        self._reset_options()
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return self._ready_obs()

    def step_async(self, actions: np.ndarray) -> None:
        """Send every env its row of ``actions`` (one row per env; an array of as many values in another shape is
        reshaped to one row per env, as SB3's policies do)."""
        rows = np.asarray(actions)
        expected = (self.num_envs, *(self.action_space.shape or ()))
        if rows.shape != expected and rows.size == math.prod(expected):
            rows = rows.reshape(expected)  # as SB3's policies reshape actions: (-1, *action_space.shape)
        if rows.shape != expected:
            raise ValueError(
                f"actions must have shape {expected} (one row per env of {self.action_space}), got {rows.shape}"
            )
        ready = self._manager.ready_obs_id
        if len(ready) != self.num_envs:
            states = {i: s.value for i, s in self._manager.env_states.items() if i not in ready}
            raise EnvManagerError(f"SB3VecEnv steps every env, but envs {states} are not waiting for an action")
        self._manager.step_async(rows)
        self._waiting = True

    def step_wait(self) -> VecEnvStepReturn:
        """Wait for every env's step: observations, float32 rewards, dones and SB3's infos."""
        batch = self._manager.step_wait()
        self._waiting = False
        if len(batch.env_ids) != self.num_envs:
            raise EnvManagerError(
                f"SB3VecEnv got envs {batch.env_ids.tolist()} of {self.num_envs} back from step_wait()"
            )
        order = np.argsort(batch.env_ids)  # rows by env id (an async manager returns them as they finish)
        rewards = np.asarray(batch.reward, dtype=np.float32).reshape(self.num_envs)[order]
        dones = np.asarray(batch.done, dtype=bool)[order]
        infos: list[dict[str, Any]] = []
        for row in order:
            info = dict(batch.info[row])
            info["TimeLimit.truncated"] = bool(batch.truncated[row]) and not bool(batch.terminated[row])
            if batch.done[row]:
                info["terminal_observation"] = copy.deepcopy(batch.final_obs[int(batch.env_ids[row])])
            infos.append(info)
        ready = set(self._manager.ready_obs_id)
        if len(ready) != self.num_envs:  # ended episodes the manager does not restart itself (auto_reset off, ...)
            self._manager.reset({env_id: {} for env_id in range(self.num_envs) if env_id not in ready})
        return self._ready_obs(), rewards, dones, infos

    def close(self) -> None:
        """Close the manager and its envs."""
        self._manager.close()

    # ----- env attributes and methods -------------------------------------------------------------
    def get_attr(self, attr_name: str, indices: Indices = None) -> list[Any]:
        """The attribute ``attr_name`` of the envs ``indices``; a method comes as a function calling it there."""
        described = self._manager.describe_envs(attr_name)
        out = []
        for env_id in self._indices(indices):
            kind = described[env_id]
            if kind == MISSING:
                raise AttributeError(
                    f"env {env_id} ({self._manager.manager_type} manager) has no attribute {attr_name!r}"
                )
            out.append(self._method(attr_name, env_id) if kind == METHOD else kind[1])
        return out

    def set_attr(self, attr_name: str, value: Any, indices: Indices = None) -> None:
        """Set ``attr_name`` to ``value`` on the envs ``indices`` (in their processes)."""
        self._manager.call_envs("__setattr__", (attr_name, value), {}, self._indices(indices))

    def env_method(
        self, method_name: str, *method_args: Any, indices: Indices = None, **method_kwargs: Any
    ) -> list[Any]:
        """Call ``method_name`` on the envs ``indices`` (in their processes); their results in index order."""
        ids = self._indices(indices)
        results = self._manager.call_envs(method_name, method_args, method_kwargs, ids)
        return [results[env_id] for env_id in ids]

    def env_is_wrapped(self, wrapper_class: type[Any], indices: Indices = None) -> list[bool]:
        """Whether each env holds a gymnasium wrapper of ``wrapper_class`` (a ding env's ``has_wrapper``).

        A ding env is no gymnasium wrapper itself; envs without ``has_wrapper`` hold none that can be seen.
        """
        ids = self._indices(indices)
        described = self._manager.describe_envs("has_wrapper")
        asked = [env_id for env_id in ids if described[env_id] == METHOD]
        found = self._manager.call_envs("has_wrapper", (wrapper_class,), {}, asked) if asked else {}
        return [bool(found.get(env_id, False)) for env_id in ids]

    def get_images(self) -> Sequence[np.ndarray | None]:
        """Each env's ``render()`` (an RGB array where the env renders one)."""
        return self.env_method("render")

    # ----- helpers --------------------------------------------------------------------------------
    def _ready_obs(self) -> VecEnvObs:
        batch = self._manager.ready_obs_batch()
        if batch.env_ids.tolist() != list(range(self.num_envs)):
            raise EnvManagerError(f"only envs {batch.env_ids.tolist()} of {self.num_envs} are waiting for an action")
        return copy.deepcopy(batch.obs)  # SB3 keeps it across the next step; a manager may hand out views

    def _indices(self, indices: Indices) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        ids = [int(indices)] if isinstance(indices, (int, np.integer)) else [int(i) for i in indices]
        bad = [i for i in ids if not -self.num_envs <= i < self.num_envs]
        if bad:
            raise IndexError(f"env indices {bad} out of range for {self.num_envs} envs")
        return [i % self.num_envs for i in ids]  # -1 is the last env, as in SB3's vec envs

    def _method(self, name: str, env_id: int) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            return self.env_method(name, *args, indices=[env_id], **kwargs)[0]

        call.__name__ = name
        return call

    def __enter__(self) -> SB3VecEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SB3VecEnv({type(self._manager).__name__}, num_envs={self.num_envs})"


def _check_distinct_envs(manager: BaseEnvManager) -> None:
    """Raise ``ValueError`` when in-process envs share one simulator: the env functions returned one env instance."""
    envs = manager.in_process_envs()
    if envs is None:  # envs in workers: each process built its own
        return
    owners: dict[int, int] = {}
    for env_id, env in enumerate(envs):
        simulator = env.env.unwrapped if isinstance(env, DingEnvWrapper) else env
        first = owners.setdefault(id(simulator), env_id)
        if first != env_id:
            raise ValueError(
                f"envs {first} and {env_id} are one env instance: each env function must make a new env (build it "
                "inside the function, not once outside it)"
            )


def make_sb3_vec_env(manager_cfg: dict[str, Any], env_fns: Sequence[EnvFn]) -> SB3VecEnv:
    """Build the manager ``manager_cfg`` names (``{'type': 'subprocess', ...}``) over ``env_fns``, as an SB3 VecEnv.

    Example:
        >>> from functools import partial
        >>> from ding.envs import DingEnvWrapper
        >>> venv = make_sb3_vec_env({'type': 'base'}, [partial(DingEnvWrapper, cfg={'env_id': 'CartPole-v1'})] * 3)
        >>> venv.num_envs, venv.observation_space.shape
        (3, (4,))
        >>> venv.close()
    """
    manager = create_env_manager(manager_cfg, env_fns)
    try:
        return SB3VecEnv(manager)
    except BaseException:
        manager.close()
        raise


__all__ = ["SB3_ACTION_SPACES", "SB3VecEnv", "make_sb3_vec_env"]
