"""``load_policy``: a trained policy from an experiment directory or a checkpoint, acting on numpy observations.

::

    from ding.entry import load_policy

    policy = load_policy("cartpole_dqn_seed0")  # total_config.py and ckpt/ckpt_best.pth.tar
    obs, _ = gymnasium.make("CartPole-v1").reset(seed=0)
    action = policy.act(obs)  # numpy in, numpy out, greedy
    actions = policy.act_batch(np.stack([obs, obs]))  # one action per row
"""

from __future__ import annotations

import os
import pathlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from easydict import EasyDict
from gymnasium import spaces

from ding.config import read_config
from ding.entry.utils import compile_for_run, create_policy, set_pkg_seed
from ding.envs.from_config import env_class
from ding.envs.probe import spec_trace_of
from ding.envs.spaces import EnvSpaces
from ding.errors import ConfigError
from ding.utils.checkpoint_files import CKPT_BEST, CheckpointError, checkpoint_counter, load_checkpoint

CONFIG_FILE = "total_config.py"


def restore_policy(cfg: EasyDict, load_path: str | os.PathLike[str]) -> tuple[Any, dict[str, Any]]:
    """The policy ``cfg`` names, with the checkpoint ``load_path`` loaded into its eval mode, and the checkpoint.

    A missing file, a file that is no checkpoint, or one whose model does not fit the config's model raises
    :class:`~ding.worker.CheckpointError` naming the file.
    """
    state = load_checkpoint(load_path)
    set_pkg_seed(cfg.seed)
    policy = create_policy(cfg, cfg.seed)
    try:
        policy.eval_mode.load_state_dict(state)
    except (RuntimeError, ValueError, KeyError) as err:
        lines = [line.strip() for line in str(err).splitlines() if line.strip()]
        first = lines[1] if len(lines) > 1 else lines[0] if lines else type(err).__name__
        raise CheckpointError(f"checkpoint {load_path} does not fit the model of this config: {first}") from err
    return policy, state


def experiment_files(path: str | os.PathLike[str]) -> tuple[pathlib.Path, pathlib.Path]:
    """``(config, checkpoint)`` of an experiment directory or of a checkpoint in its ``ckpt/`` directory.

    >>> [p.as_posix() for p in experiment_files('runs/cartpole_dqn_seed0/ckpt/iteration_40.pth.tar')]
    ['runs/cartpole_dqn_seed0/total_config.py', 'runs/cartpole_dqn_seed0/ckpt/iteration_40.pth.tar']
    """
    given = pathlib.Path(path)
    if given.is_dir():
        return given / CONFIG_FILE, given / "ckpt" / CKPT_BEST
    return given.parent.parent / CONFIG_FILE, given


def load_policy(
    path: str | os.PathLike[str], config: str | os.PathLike[str] | None = None, *, seed: int | None = None
) -> LoadedPolicy:
    """Load a trained policy to act with (see :class:`LoadedPolicy`).

    ``path`` is an experiment directory (its ``total_config.py`` and ``ckpt/ckpt_best.pth.tar`` are used) or a
    checkpoint file, whose experiment directory is two levels up (``<exp_dir>/ckpt/<name>.pth.tar``); ``config``
    names the config file instead. ``seed`` (default: the config's) seeds the policy's own random numbers, which
    only ``deterministic=False`` uses.
    """
    config_path, ckpt_path = experiment_files(path)
    if config is not None:
        config_path = pathlib.Path(config)
    if not pathlib.Path(path).exists():
        raise CheckpointError(f"{path} does not exist: give an experiment directory or a checkpoint file")
    if not ckpt_path.is_file():
        raise CheckpointError(f"experiment directory {path} has no checkpoint {ckpt_path.relative_to(path)}")
    if not config_path.is_file():
        raise ConfigError(
            f"no config {config_path} for checkpoint {ckpt_path}: a checkpoint's config is {CONFIG_FILE} in its "
            "experiment directory, two levels up; pass config=PATH"
        )
    main, create = read_config(config_path)
    cfg, _ = compile_for_run(main, create, seed, None)
    policy, state = restore_policy(cfg, ckpt_path)
    env_spaces = spec_trace_of(env_class(cfg.env), cfg.env)[-1][1]
    return LoadedPolicy(policy, cfg, env_spaces, ckpt_path, checkpoint_counter(state, "last_step", ckpt_path))


class LoadedPolicy:
    """A trained policy that maps observations to actions: numpy in, numpy out.

    :meth:`act` takes one observation (as the env gives it) and returns one action; :meth:`act_batch` a batch
    (a leading axis, or a sequence of observations) and returns the actions stacked. Both are greedy by default
    (the policy's eval mode, as evaluations play); ``deterministic=False`` samples as the policy's collect mode
    does at the checkpoint's env step (epsilon-greedy for DQN, from the action distribution for PPO and SAC).
    Observations are cast to the observation space's dtype (a Python list or a float64 array will do); one of
    another shape, or one that would lose its kind of value (floats for uint8 frames), raises an error.
    Actions lie in :attr:`action_space`: an int64 scalar array for ``Discrete``, a float32 array for ``Box``.
    """

    def __init__(self, policy: Any, cfg: EasyDict, env_spaces: EnvSpaces, checkpoint: pathlib.Path, env_step: int):
        self.policy = policy
        self.cfg = cfg
        self.observation_space: spaces.Space[Any] = env_spaces.observation
        self.action_space: spaces.Space[Any] = env_spaces.action
        self.checkpoint = checkpoint
        self.env_step = env_step

    def __repr__(self) -> str:
        return (
            f"LoadedPolicy({self.cfg.policy.type} from {self.checkpoint}, obs={self.observation_space}, "
            f"act={self.action_space})"
        )

    def act(self, obs: Any, deterministic: bool = True) -> np.ndarray:
        """The action for one observation."""
        return self._actions({0: self._observation(obs, "obs")}, deterministic)[0]

    def act_batch(self, obs_batch: Any, deterministic: bool = True) -> np.ndarray:
        """The actions for a batch of observations, stacked on a leading axis."""
        batch = self._split(obs_batch)
        obs = {i: self._observation(one, f"obs_batch[{i}]") for i, one in enumerate(batch)}
        actions = self._actions(obs, deterministic)
        return np.stack([actions[i] for i in range(len(batch))])

    def predict(
        self, observation: Any, state: Any = None, episode_start: Any = None, deterministic: bool = True
    ) -> tuple[np.ndarray, None]:
        """stable-baselines3's ``model.predict``: ``(action, None)``; a batch when ``observation`` has a leading
        batch axis beyond the observation space's shape (``state`` and ``episode_start`` are not used)."""
        if self._is_batch(observation):
            return self.act_batch(observation, deterministic), None
        return self.act(observation, deterministic), None

    # ----- helpers ---------------------------------------------------------------------------------
    def _actions(self, obs: Mapping[int, Any], deterministic: bool) -> dict[int, np.ndarray]:
        if not isinstance(deterministic, bool):
            raise TypeError(f"deterministic must be a bool, got {type(deterministic).__name__} {deterministic!r}")
        if deterministic:
            outputs = self.policy.eval_mode.forward(obs)
        else:
            collect = self.policy.collect_mode
            outputs = collect.forward(obs, **collect.collect_kwargs(self.env_step))
        return {env_id: np.asarray(output["action"]) for env_id, output in outputs.items()}

    def _observation(self, obs: Any, name: str) -> Any:
        space = self.observation_space
        if not isinstance(space, spaces.Box):
            return obs
        arr = np.asarray(obs)
        if arr.shape != space.shape:
            raise ValueError(f"{name} has shape {arr.shape}; the policy's observations have shape {space.shape}")
        if arr.dtype != space.dtype:
            if not np.can_cast(arr.dtype, space.dtype, casting="same_kind"):
                raise TypeError(
                    f"{name} has dtype {arr.dtype}, which does not cast safely to the observation space's {space.dtype}"
                )
            arr = arr.astype(space.dtype)
        return arr

    def _split(self, obs_batch: Any) -> Sequence[Any]:
        if isinstance(obs_batch, Mapping):  # a Dict observation batched per key
            keys = list(obs_batch)
            sizes = {len(obs_batch[key]) for key in keys}
            if len(sizes) != 1:
                raise ValueError(f"obs_batch's entries have different batch sizes: {sorted(sizes)}")
            return [{key: obs_batch[key][i] for key in keys} for i in range(sizes.pop())]
        batch = list(obs_batch) if not isinstance(obs_batch, np.ndarray) else [row for row in obs_batch]
        if not batch:
            raise ValueError("obs_batch is empty: give at least one observation")
        return batch

    def _is_batch(self, observation: Any) -> bool:
        space = self.observation_space
        if isinstance(space, spaces.Box):
            return np.ndim(observation) == len(space.shape) + 1
        if isinstance(space, spaces.Dict) and isinstance(observation, Mapping):
            key, sub = next(iter(space.spaces.items()))
            return isinstance(sub, spaces.Box) and np.ndim(observation[key]) == len(sub.shape) + 1
        return False
