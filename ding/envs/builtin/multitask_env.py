"""``multitask``: several registered ding envs behind one spec, as one ding env that env managers run.

The spec is stated from the tasks' configs alone: each task's class states its spaces (``raw_spaces``), and
:func:`~ding.envs.env_wrappers.multitask.merge_task_spaces` merges them; the chain then puts the task into the
observation (``task_id``) and, for training envs with ``curriculum`` set, samples tasks by progress.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import gymnasium as gym
from easydict import EasyDict

from ding.envs.base_env import BaseEnv
from ding.envs.bridges.from_gymnasium import DingEnvWrapper
from ding.envs.bridges.to_gymnasium import GymnasiumEnv
from ding.envs.env_registry import ENV_REGISTRY
from ding.envs.env_wrappers import WrapperChain
from ding.envs.env_wrappers.multitask import MultitaskEnv, merge_task_spaces
from ding.envs.from_config import env_class
from ding.envs.spaces import EnvSpaces
from ding.errors import ConfigError, EnvSpecError
from ding.utils.accepts import anything, one_of, optional
from ding.utils.merge import join_path

ENCODINGS = ("one_hot", "index", "dict")
ORDERS = ("random", "cycle")


def task_configs(cfg: Mapping[str, Any]) -> list[EasyDict]:
    """The env config of each task of ``cfg.tasks``, with the multitask env's ``is_train``.

    A task is an env config naming a registered env by ``type`` (with its ``import_names``), or a gymnasium id,
    which stands for ``{'type': 'ding_env_wrapper', 'env_id': <id>}``.

    >>> [t.type for t in task_configs({'tasks': ['Acrobot-v1', {'type': 'cartpole'}]})]
    ['ding_env_wrapper', 'cartpole']
    """
    tasks = cfg.get("tasks")
    if not isinstance(tasks, Sequence) or isinstance(tasks, str) or not tasks:
        raise ConfigError(
            f"multitask: env.tasks must be a non-empty list of env configs or gymnasium ids; got {tasks!r}"
        )
    out = []
    for index, task in enumerate(tasks):
        if isinstance(task, str):
            task = {"type": "ding_env_wrapper", "env_id": task}
        if not isinstance(task, Mapping) or not task.get("type"):
            raise ConfigError(
                f"multitask: {join_path('env.tasks', index)} must be an env config with a 'type' or a gymnasium id; "
                f"got {task!r}"
            )
        out.append(EasyDict({**task, "is_train": bool(cfg.get("is_train", True))}))
    return out


def task_names(cfg: Mapping[str, Any]) -> list[str]:
    """``cfg.task_names``, or each task's ``env_id`` (else its ``type``), numbered where two are alike.

    >>> task_names({'tasks': ['CartPole-v1', 'CartPole-v1', {'type': 'pendulum'}]})
    ['CartPole-v1#0', 'CartPole-v1#1', 'pendulum']
    """
    tasks = task_configs(cfg)
    given = cfg.get("task_names")
    if given is not None:
        if len(given) != len(tasks) or len({str(n) for n in given}) != len(given):
            raise ConfigError(f"multitask: task_names must be {len(tasks)} different names; got {given!r}")
        return [str(name) for name in given]
    names = [str(task.get("env_id") or task.type) for task in tasks]
    return [f"{name}#{i}" if names.count(name) > 1 else name for i, name in enumerate(names)]


def _task_spaces(index: int, task: EasyDict) -> EnvSpaces:
    cls = env_class(task)
    if not cls.declares_spaces():
        raise EnvSpecError(
            f"multitask: env.tasks.{index} ({task.type!r}, {cls.__name__}) does not declare raw_spaces; a multitask "
            "env states its spec ahead of time, so every task's class must"
        )
    return cls.spaces_from_config(task)


def _choice(cfg: Mapping[str, Any], key: str, options: Sequence[str]) -> str:
    value = cfg.get(key)
    if value not in options:
        raise ConfigError(f"multitask: {key} must be one of {', '.join(map(repr, options))}; got {value!r}")
    return str(value)


@ENV_REGISTRY.register("multitask")
class MultitaskDingEnv(DingEnvWrapper):
    """One of several registered envs (``tasks``) per episode, behind one spec, with the task in the observation.

    Config keys: ``tasks`` (env configs, or gymnasium ids), ``task_names`` (None: from the tasks),
    ``pad_observation`` (zero-pad flat observations of different lengths), ``task_id_encoding`` (``'one_hot'``,
    ``'index'`` or ``'dict'``: the ``task_id`` wrapper's encoding), ``task_order`` (``'random'`` or ``'cycle'``;
    None: random for training envs, in turn for evaluators, whose fixed seed would otherwise pick one task
    every episode; each evaluator env starts at its seed modulo the number of tasks), ``curriculum`` (None,
    or the ``curriculum`` wrapper's arguments, ``{}`` for its defaults: training envs sample tasks by
    progress) and ``env_wrapper`` (the chain after ``task_id``; ``default``).
    ``info`` carries ``task_id`` and ``task_name`` at every step.

    Example:
        >>> car = {'type': 'mountain_car', 'import_names': ['dizoo.classic_control.mountain_car.envs']}
        >>> cfg = {'tasks': ['Acrobot-v1', car], 'pad_observation': True}
        >>> MultitaskDingEnv.spaces_from_config(cfg).shapes
        ((8,), 3, (1,))
        >>> env = MultitaskDingEnv(cfg)
        >>> env.seed(0)
        >>> obs = env.reset()
        >>> obs.shape, env.step(0).info['task_name'] in ('Acrobot-v1', 'mountain_car')
        ((8,), True)
        >>> env.close()
    """

    config: ClassVar[dict[str, Any]] = {
        "tasks": anything(None, note="a list of gymnasium ids or env configs, checked task by task"),
        "task_names": optional(Sequence[str], note="None: from the tasks"),
        "pad_observation": False,
        "task_id_encoding": one_of(*ENCODINGS, default="one_hot"),
        "task_order": one_of(*ORDERS, None, default=None, note="None: random for training envs, cycle for evaluation"),
        "curriculum": anything(None, note="the curriculum wrapper's arguments, checked with them"),
    }

    def __init__(self, cfg: Mapping[str, Any] | None = None) -> None:
        super().__init__(cfg=cfg or {})

    @classmethod
    def raw_spaces(cls, cfg: Mapping[str, Any]) -> EnvSpaces:
        """The tasks' spaces merged (see :func:`~ding.envs.env_wrappers.multitask.merge_task_spaces`)."""
        pad = cfg.get("pad_observation", False)
        if not isinstance(pad, bool):
            raise ConfigError(f"multitask: pad_observation must be a bool; got {pad!r}")
        task_spaces = [_task_spaces(i, task) for i, task in enumerate(task_configs(cfg))]
        return merge_task_spaces(task_spaces, pad_observation=pad, task_names=task_names(cfg))

    @classmethod
    def wrapper_chain(cls, cfg: Mapping[str, Any]) -> WrapperChain:
        """``curriculum`` (training envs, when set), ``task_id``, then ``env_wrapper`` and ``eval_episode_return``."""
        encoding = _choice(cfg, "task_id_encoding", ENCODINGS)
        items: list[Any] = []
        curriculum = cfg.get("curriculum")
        if curriculum is not None and bool(cfg.get("is_train", True)):
            if not isinstance(curriculum, Mapping):
                raise ConfigError(
                    f"multitask: curriculum must be None or the curriculum wrapper's arguments; got {curriculum!r}"
                )
            items.append({"type": "curriculum", "kwargs": dict(curriculum)})
        items.append({"type": "task_id", "kwargs": {"num_tasks": len(task_configs(cfg)), "encoding": encoding}})
        return [*items, *(super().wrapper_chain(cfg) or [])]  # type: ignore[misc]

    def _make_raw_env(self, render: bool = False) -> gym.Env[Any, Any]:
        if render:
            raise ConfigError("multitask envs record no replays: enable_save_replay on a task's own env instead")
        order = self._cfg.get("task_order")
        if order is None:
            order = "random" if self._cfg.is_train else "cycle"
        order = _choice({"task_order": order}, "task_order", ORDERS)
        envs: list[gym.Env[Any, Any]] = []
        try:
            for task in task_configs(self._cfg):
                built: BaseEnv = env_class(task)(cfg=task)  # type: ignore[call-arg]
                envs.append(GymnasiumEnv(built))
            return MultitaskEnv(
                envs,
                task_names(self._cfg),
                pad_observation=bool(self._cfg.pad_observation),
                task_order=order,  # type: ignore[arg-type]
            )
        except BaseException:
            for env in envs:
                env.close()
            raise
