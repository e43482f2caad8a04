"""``curriculum``: pick each episode's task of a multitask env by the progress the agent makes on it.

After an episode of task ``i`` with return ``R`` and length ``L`` (the ``n_i``-th episode of that task):

- ``a = max(current_score_update_rate, 1 / n_i)`` and ``b = max(past_score_update_rate, 1 / n_i)``;
- current score ``c_i += a * (R - c_i)``, past score ``p_i += b * (R - p_i)``, mean length ``l_i += a * (L - l_i)``;
- progress ``g_i = (c_i - p_i) / max(l_i, 1)``: the current score moves faster than the past one, so ``g_i``
  is positive while returns rise and negative while they fall, per step of the episode. For a task's first
  ``1 / current_score_update_rate`` episodes both scores are the running mean of its returns (``1 / n_i`` is the
  larger rate), so its progress is 0 until then: rates of 0.001 and 0.0005 (the defaults) suit long runs.

The next task is drawn with probability proportional to ``f ** (g_i / max_j |g_j|)`` (1 for every task while
no task has progressed), where ``f = progress_favor ** min(1, N / (num_tasks * warmup_period))`` after ``N``
episodes in all: ``f`` grows from 1 (uniform sampling) to ``progress_favor`` over the warmup, and then the task
with the fastest progress is ``progress_favor`` times likelier than a task without progress.
"""

from __future__ import annotations

from typing import Annotated, Any

import numpy as np
from gymnasium import spaces

from ding.envs.env_wrappers.arguments import AtLeast, Finite, NonNegativeInt, UnitFloat
from ding.envs.env_wrappers.base import DingWrapper, SpaceTriple, episode_began, register_wrapper
from ding.envs.env_wrappers.multitask import TASK_ID_KEY
from ding.envs.env_wrappers.rule import describe_space
from ding.errors import ConfigError, ShapeRuleError

Favor = Annotated[float, Finite(), AtLeast(1)]
StepResult = tuple[Any, Any, bool, bool, dict[str, Any]]
CURRICULUM_KEY = "curriculum"
"""The ``info`` key of the curriculum's statistics (at every reset and at an episode's end)."""


@register_wrapper("curriculum")
class CurriculumWrapper(DingWrapper):
    """Sample the task of each episode of a multitask env inside by recent progress (module docstring).

    ``reset`` passes the chosen task to the env inside as ``options={'task_id': i}``; a caller's own
    ``task_id`` option is passed on instead (the episode still counts). ``reset(seed=s)`` reseeds the
    sampler. ``info['curriculum']`` (:meth:`stats`) reports the scores, progress and probabilities at every
    reset and at each episode's end. Spaces are unchanged; the reward must be one value per step.

    Example:
        >>> from gymnasium.envs.classic_control import CartPoleEnv
        >>> from ding.envs.env_wrappers.multitask import MultitaskEnv
        >>> env = CurriculumWrapper(MultitaskEnv([CartPoleEnv(), CartPoleEnv()]), progress_favor=4.0)
        >>> obs, info = env.reset(seed=0)
        >>> info['curriculum']['probabilities'].tolist()
        [0.5, 0.5]
    """

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        *,
        progress_favor: Favor = 10.0,
        current_score_update_rate: UnitFloat = 0.001,
        past_score_update_rate: UnitFloat = 0.0005,
        warmup_period: NonNegativeInt = 100,
    ) -> SpaceTriple:
        if rew_space.shape is None or int(np.prod(rew_space.shape)) != 1:
            raise ShapeRuleError(
                "curriculum needs one reward value per step (shape (1,) or ()); got "
                f"{describe_space(rew_space, 'reward')}"
            )
        return obs_space, act_space, rew_space

    def _setup(self) -> None:
        try:
            tasks = int(self.env.get_wrapper_attr("num_tasks"))
        except AttributeError as err:
            raise ConfigError(
                "curriculum needs a multitask env inside (one with num_tasks, such as MultitaskEnv); "
                f"{self.env} has none"
            ) from err
        self.num_tasks = tasks
        self._rng = np.random.default_rng()
        self._counts = np.zeros(tasks, dtype=np.int64)
        self._current = np.zeros(tasks)
        self._past = np.zeros(tasks)
        self._length = np.zeros(tasks)
        self._task = 0
        self._return = 0.0
        self._steps = 0

    def progress(self) -> np.ndarray:
        """Each task's progress ``g_i``: the change of its recent returns per step."""
        return (self._current - self._past) / np.maximum(self._length, 1.0)

    def favor(self) -> float:
        """``f``: how much likelier the fastest-progressing task is now than one without progress."""
        warmup = self.num_tasks * self.warmup_period
        ramp = 1.0 if warmup == 0 else min(1.0, float(self._counts.sum()) / warmup)
        return float(self.progress_favor**ramp)

    def probabilities(self) -> np.ndarray:
        """The probability of each task for the next episode."""
        progress = self.progress()
        largest = float(np.abs(progress).max())
        if largest == 0.0:
            return np.full(self.num_tasks, 1.0 / self.num_tasks)
        weights = self.favor() ** (progress / largest)
        return weights / weights.sum()  # type: ignore[no-any-return]

    def stats(self) -> dict[str, Any]:
        """What ``info['curriculum']`` reports: per-task arrays, and the task of the running episode."""
        return {
            "task_id": self._task,
            "episodes": self._counts.copy(),
            "current_score": self._current.copy(),
            "past_score": self._past.copy(),
            "progress": self.progress(),
            "probabilities": self.probabilities(),
            "favor": self.favor(),
        }

    def _update(self, task: int, episode_return: float, length: int) -> None:
        self._counts[task] += 1
        a = max(self.current_score_update_rate, 1.0 / self._counts[task])
        b = max(self.past_score_update_rate, 1.0 / self._counts[task])
        self._current[task] += a * (episode_return - self._current[task])
        self._past[task] += b * (episode_return - self._past[task])
        self._length[task] += a * (length - self._length[task])

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        if kwargs.get("seed") is not None:
            self._rng = np.random.default_rng(kwargs["seed"])
        options = dict(kwargs.pop("options", None) or {})
        if TASK_ID_KEY not in options:
            options[TASK_ID_KEY] = int(self._rng.choice(self.num_tasks, p=self.probabilities()))
        obs, info = self.env.reset(options=options, **kwargs)
        self._task = int(info.get(TASK_ID_KEY, options[TASK_ID_KEY]))  # type: ignore[arg-type]
        self._return, self._steps = 0.0, 0
        return obs, {**info, CURRICULUM_KEY: self.stats()}

    def step(self, action: Any) -> StepResult:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._return += float(np.asarray(reward).reshape(()))
        self._steps += 1
        began = episode_began(info)
        if terminated or truncated or began is not None:
            self._update(self._task, self._return, self._steps)
            if began is not None:  # the env inside chose the next task itself: follow it
                self._task = int(began.get(TASK_ID_KEY, self._task))
                self._return, self._steps = 0.0, 0
            info = {**info, CURRICULUM_KEY: self.stats()}
        return obs, reward, terminated, truncated, info
