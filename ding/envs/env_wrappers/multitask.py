"""Several envs behind one spec: :class:`MultitaskEnv`, the rule that merges their spaces, and ``task_id``.

A multitask env runs one of its task envs per episode. Its spaces are stated ahead of time by
:func:`merge_task_spaces`, from the task envs' own spaces:

- actions: every task must take the same action space (a policy acts in one space);
- rewards: the same shape and dtype in every task; the bounds become their union;
- observations: the same shape and dtype in every task, bounds united; with ``pad_observation=True``
  flat (1-D) Box observations of one dtype and different lengths are zero-padded at the end to the
  longest, and each entry's bounds are the union over the tasks (0 included where a task pads).

Anything else is refused with a :class:`~ding.errors.ShapeRuleError` naming the task and its space.
The env reports the episode's task in ``info['task_id']`` and ``info['task_name']``; the registered
wrapper ``task_id`` (:class:`TaskIdWrapper`) puts it into the observation, with its own shape rule.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ding.envs.env_wrappers.arguments import PositiveInt
from ding.envs.env_wrappers.base import DingWrapper, SpaceTriple, episode_began, register_wrapper
from ding.envs.env_wrappers.rule import describe_space, require_box
from ding.envs.values.spaces import EnvSpaces, reward_space_of
from ding.errors import ConfigError, ShapeRuleError

TaskIdEncoding = Literal["one_hot", "index", "dict"]
TaskOrder = Literal["random", "cycle"]
TASK_ID_KEY = "task_id"
"""The ``info`` key (and the default observation key) of the episode's task index."""

StepResult = tuple[Any, Any, bool, bool, dict[str, Any]]


def _name(names: Sequence[str] | None, index: int) -> str:
    return f"task {index} ({names[index]!r})" if names else f"task {index}"


def _union_box(boxes: Sequence[spaces.Box]) -> spaces.Box:
    low = np.minimum.reduce([box.low for box in boxes])
    high = np.maximum.reduce([box.high for box in boxes])
    return spaces.Box(low, high, boxes[0].shape, boxes[0].dtype)


def _same_layout(
    what: str, items: Sequence[spaces.Space[Any]], names: Sequence[str] | None, hint: str = ""
) -> spaces.Space[Any]:
    """One space for ``items``: the first when all are equal, else the union of Boxes of one shape and dtype."""
    first = items[0]
    if all(item == first for item in items[1:]):
        return first
    for index, item in enumerate(items):
        if not (isinstance(item, spaces.Box) and isinstance(first, spaces.Box)) or (
            item.shape != first.shape or item.dtype != first.dtype
        ):
            raise ShapeRuleError(
                f"multitask: {_name(names, index)} has {what} space {describe_space(item, what)}, but "
                f"{_name(names, 0)} has {describe_space(first, what)}; every task needs the same {what} shape and "
                f"dtype{hint}"
            )
    return _union_box(items)  # type: ignore[arg-type]


def _padded_observation(items: Sequence[spaces.Space[Any]], names: Sequence[str] | None) -> spaces.Box:
    boxes = []
    for index, item in enumerate(items):
        box = require_box(item, f"multitask with pad_observation=True ({_name(names, index)})", "observation")
        if len(box.shape) != 1 or box.dtype != items[0].dtype:
            raise ShapeRuleError(
                f"multitask: pad_observation=True needs flat (1-D) Box observations of one dtype; "
                f"{_name(names, index)} has {describe_space(box, 'observation')}, {_name(names, 0)} has "
                f"{describe_space(items[0], 'observation')}"
            )
        boxes.append(box)
    size = max(box.shape[0] for box in boxes)

    def padded(bound: np.ndarray) -> np.ndarray:  # the bound of a task's padded observation: 0 where it pads
        return np.concatenate([bound, np.zeros(size - bound.shape[0], dtype=bound.dtype)])

    low = np.minimum.reduce([padded(box.low) for box in boxes])
    high = np.maximum.reduce([padded(box.high) for box in boxes])
    return spaces.Box(low, high, (size,), boxes[0].dtype)


def merge_task_spaces(
    task_spaces: Sequence[EnvSpaces], *, pad_observation: bool = False, task_names: Sequence[str] | None = None
) -> EnvSpaces:
    """The spaces of a multitask env over tasks of ``task_spaces`` (the rule in the module docstring).

    ``task_names`` only name the tasks in errors.

    Example:
        >>> box = lambda n: spaces.Box(-1, 1, (n,), np.float32)
        >>> merged = merge_task_spaces([EnvSpaces(box(4), spaces.Discrete(3)), EnvSpaces(box(2), spaces.Discrete(3))],
        ...                            pad_observation=True)
        >>> merged.observation
        Box(-1.0, 1.0, (4,), float32)
        >>> merge_task_spaces([EnvSpaces(box(4), spaces.Discrete(2)), EnvSpaces(box(4), spaces.Discrete(3))])
        Traceback (most recent call last):
        ...
        ding.errors.ShapeRuleError: multitask: task 1 has action space Discrete(3), but task 0 has Discrete(2); \
every task must take the same actions
    """
    if not task_spaces:
        raise ConfigError("multitask needs at least one task; got none")
    if task_names is not None and len(task_names) != len(task_spaces):
        raise ConfigError(f"multitask got {len(task_names)} task names for {len(task_spaces)} tasks")
    actions = [s.action for s in task_spaces]
    for index, action in enumerate(actions):
        if action != actions[0]:
            raise ShapeRuleError(
                f"multitask: {_name(task_names, index)} has action space {action}, but {_name(task_names, 0)} has "
                f"{actions[0]}; every task must take the same actions"
            )
    reward = _same_layout("reward", [s.reward for s in task_spaces], task_names)
    observations = [s.observation for s in task_spaces]
    if pad_observation:
        observation: spaces.Space[Any] = _padded_observation(observations, task_names)
    else:
        hint = " (flat Box observations of different lengths: set pad_observation=True)"
        observation = _same_layout("observation", observations, task_names, hint)
    return EnvSpaces(observation, actions[0], reward)


class MultitaskEnv(gym.Env[Any, Any]):
    """A gymnasium env that plays one of ``envs`` (its tasks) per episode, behind one merged spec.

    ``reset(options={'task_id': i})`` (an index or a task name) picks the episode's task; without it the
    task is drawn uniformly from ``np_random`` (``task_order='random'``; ``reset(seed=s)`` reseeds it, as
    gymnasium envs do) or taken in turn (``'cycle'``: from ``s % num_tasks`` for a first reset seeded ``s``,
    else from 0). The seed goes on to the task's own reset. Observations are padded as
    :func:`merge_task_spaces` says; ``info`` carries ``task_id`` and ``task_name`` at every reset and step.
    ``close()`` closes every task.

    Example:
        >>> from gymnasium.envs.classic_control import AcrobotEnv, MountainCarEnv
        >>> env = MultitaskEnv([AcrobotEnv(), MountainCarEnv()], ['acrobot', 'mountain_car'], pad_observation=True)
        >>> env.observation_space.shape, env.action_space
        ((6,), Discrete(3))
        >>> obs, info = env.reset(seed=0, options={'task_id': 'mountain_car'})
        >>> obs.shape, obs[2:].tolist(), info['task_id']
        ((6,), [0.0, 0.0, 0.0, 0.0], 1)
        >>> env.close()
    """

    def __init__(
        self,
        envs: Sequence[gym.Env[Any, Any]],
        task_names: Sequence[str] | None = None,
        *,
        pad_observation: bool = False,
        task_order: TaskOrder = "random",
    ) -> None:
        envs = list(envs)
        names = [str(n) for n in task_names] if task_names is not None else [f"task{i}" for i in range(len(envs))]
        if len(set(names)) != len(names):
            raise ConfigError(f"multitask task names must differ; got {names}")
        if task_order not in ("random", "cycle"):
            raise ConfigError(f"multitask: task_order must be 'random' or 'cycle'; got {task_order!r}")
        task_spaces = [EnvSpaces(env.observation_space, env.action_space, reward_space_of(env)) for env in envs]
        merged = merge_task_spaces(task_spaces, pad_observation=pad_observation, task_names=names)
        self.envs = envs
        self.task_names: list[str] = names
        self.task_order: TaskOrder = task_order
        self.observation_space = merged.observation
        self.action_space = merged.action
        self.reward_space = merged.reward
        self.render_mode = envs[0].render_mode
        self._fit = _observation_fitter(merged.observation, [s.observation for s in task_spaces])
        self._task: int | None = None
        self._next_in_cycle: int | None = None

    @property
    def num_tasks(self) -> int:
        return len(self.envs)

    @property
    def current_task(self) -> int | None:
        """The index of the running episode's task (None before the first reset)."""
        return self._task

    def task_index(self, task: Any) -> int:
        """The index of ``task``, given as an index or a name; a ConfigError for anything else."""
        if isinstance(task, (int, np.integer)) and not isinstance(task, bool) and 0 <= task < self.num_tasks:
            return int(task)
        if isinstance(task, str) and task in self.task_names:
            return self.task_names.index(task)
        raise ConfigError(
            f"multitask: unknown task {task!r}; give an index in [0, {self.num_tasks - 1}] or a name of "
            f"{self.task_names}"
        )

    def _choose(self, seed: int | None) -> int:
        if self.task_order == "cycle":
            task = self._next_in_cycle
            if task is None:  # the first episode: where the seed says (copies of one env start apart)
                task = 0 if seed is None else seed % self.num_tasks
            self._next_in_cycle = (task + 1) % self.num_tasks
            return task
        return int(self.np_random.integers(self.num_tasks))

    def _info(self, info: Mapping[str, Any]) -> dict[str, Any]:
        assert self._task is not None  # set by reset
        return {**info, TASK_ID_KEY: self._task, "task_name": self.task_names[self._task]}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        rest = dict(options or {})
        given = rest.pop(TASK_ID_KEY, None)
        self._task = self._choose(seed) if given is None else self.task_index(given)
        obs, info = self.envs[self._task].reset(seed=seed, options=rest or None)
        return self._fit[self._task](obs), self._info(info)

    def step(self, action: Any) -> StepResult:
        if self._task is None:
            raise RuntimeError("MultitaskEnv.step before reset: reset picks the episode's task")
        obs, reward, terminated, truncated, info = self.envs[self._task].step(action)
        return self._fit[self._task](obs), reward, terminated, truncated, self._info(info)

    def render(self) -> Any:
        return self.envs[self._task or 0].render()

    def close(self) -> None:
        for env in self.envs:
            env.close()


def _observation_fitter(merged: spaces.Space[Any], own: Sequence[spaces.Space[Any]]) -> list[Callable[[Any], Any]]:
    """Per task: the function that turns its observation into one of ``merged`` (zero-padding, or as it is)."""

    def keep(obs: Any) -> Any:
        return obs

    def padder(size: int, box: spaces.Box) -> Callable[[Any], Any]:
        def pad(obs: Any) -> Any:
            out = np.zeros(box.shape, dtype=box.dtype)
            out[:size] = obs
            return out

        return pad

    if not isinstance(merged, spaces.Box):
        return [keep for _ in own]
    shapes = [tuple(space.shape or ()) for space in own]  # flat Boxes where the merged space pads
    return [keep if shape == merged.shape else padder(shape[0], merged) for shape in shapes]


def _task_id_space(num_tasks: int, encoding: TaskIdEncoding, obs_dtype: Any) -> spaces.Box:
    if encoding == "one_hot":
        return spaces.Box(0, 1, (num_tasks,), obs_dtype)
    return spaces.Box(0, num_tasks - 1, (1,), obs_dtype)


@register_wrapper("task_id")
class TaskIdWrapper(DingWrapper):
    """Put the episode's task (``info['task_id']`` of a :class:`MultitaskEnv` inside) into the observation.

    Shape rule, by ``encoding``:

    - ``'one_hot'``: a flat Box ``(n,)`` → ``(n + num_tasks,)``, the task's one-hot vector appended (bounds
      [0, 1]; the observation's dtype);
    - ``'index'``: a flat Box ``(n,)`` → ``(n + 1,)``, the task index appended (bounds [0, num_tasks - 1]; the
      dtype must hold it);
    - ``'dict'``: a Dict observation gains the entry ``key``; any other becomes
      ``Dict(observation=obs, <key>=Discrete(num_tasks))``.

    The task is read from ``info['task_id']`` at every reset, and from the reset info of an episode begun inside
    ``step`` (``non_episodic`` below, :func:`~ding.envs.env_wrappers.base.episode_began`); an env that does not
    report it, or reports an index outside ``[0, num_tasks)``, is an error. Actions and rewards are unchanged.

    Example:
        >>> box = spaces.Box(-1, 1, (4,), np.float32)
        >>> TaskIdWrapper.new_space(box, spaces.Discrete(2), None, num_tasks=3)[0]
        Box([-1. -1. -1. -1.  0.  0.  0.], 1.0, (7,), float32)
        >>> TaskIdWrapper.new_shape((4,), 2, (1,), num_tasks=3, encoding='dict')[0]
        {'observation': (4,), 'task_id': 3}
    """

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        *,
        num_tasks: PositiveInt,
        encoding: TaskIdEncoding = "one_hot",
        key: str = TASK_ID_KEY,
    ) -> SpaceTriple:
        if encoding == "dict":
            if isinstance(obs_space, spaces.Dict):
                if key in obs_space.spaces:
                    raise ShapeRuleError(f"task_id: the Dict observation already has the key {key!r}; choose another")
                return spaces.Dict({**obs_space.spaces, key: spaces.Discrete(num_tasks)}), act_space, rew_space
            return spaces.Dict({"observation": obs_space, key: spaces.Discrete(num_tasks)}), act_space, rew_space
        box = require_box(obs_space, f"task_id with encoding={encoding!r}", "observation")
        if len(box.shape) != 1:
            raise ShapeRuleError(
                f"task_id with encoding={encoding!r} needs a flat (1-D) Box observation; got "
                f"{describe_space(box, 'observation')} (use encoding='dict', or flat_obs first)"
            )
        if np.issubdtype(box.dtype, np.integer) and num_tasks - 1 > np.iinfo(box.dtype).max:  # type: ignore[type-var]
            raise ShapeRuleError(f"task_id: {box.dtype} observations cannot hold task index {num_tasks - 1}")
        extra = _task_id_space(num_tasks, encoding, box.dtype)
        low, high = np.concatenate([box.low, extra.low]), np.concatenate([box.high, extra.high])
        return spaces.Box(low, high, low.shape, box.dtype), act_space, rew_space

    def _setup(self) -> None:
        inner = getattr(self.env.unwrapped, "num_tasks", None)
        if inner is not None and inner != self.num_tasks:
            raise ConfigError(f"task_id: num_tasks={self.num_tasks}, but the multitask env inside has {inner} tasks")
        self._task = 0
        dtype = self.observation_space.dtype
        self._codes = [self._code(task, dtype) for task in range(self.num_tasks)]

    def _code(self, task: int, dtype: Any) -> Any:
        if self.encoding == "one_hot":
            return np.eye(self.num_tasks, dtype=dtype)[task]
        if self.encoding == "index":
            return np.array([task], dtype=dtype)
        return np.int64(task)

    def _read_task(self, info: Mapping[str, Any]) -> None:
        if TASK_ID_KEY not in info:
            raise ConfigError(
                f"task_id needs an env that reports info[{TASK_ID_KEY!r}] at reset (a MultitaskEnv inside); "
                f"{self.env} reported {sorted(map(str, info))}"
            )
        task = info[TASK_ID_KEY]
        if not (isinstance(task, (int, np.integer)) and 0 <= task < self.num_tasks):
            raise ValueError(f"task_id: info[{TASK_ID_KEY!r}] must be an index in [0, {self.num_tasks}); got {task!r}")
        self._task = int(task)

    def observation(self, obs: Any) -> Any:
        code = self._codes[self._task]
        if self.encoding == "dict":
            return {**obs, self.key: code} if isinstance(obs, dict) else {"observation": obs, self.key: code}
        return np.concatenate([np.asarray(obs, dtype=self.observation_space.dtype), code])

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        began = episode_began(info)  # a reset made of steps (episodic_life's) may begin an episode inside one
        self._read_task(info if began is None else began)
        return self.observation(obs), info

    def step(self, action: Any) -> StepResult:
        obs, reward, terminated, truncated, info = self.env.step(action)
        began = episode_began(info)
        if began is not None:  # the observation is a new episode's first: of the task it reports
            self._read_task(began)
        return self.observation(obs), reward, terminated, truncated, info
