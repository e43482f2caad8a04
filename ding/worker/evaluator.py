"""``InteractionSerialEvaluator``: play ``n_episode`` greedy episodes on the evaluator envs and judge them."""

from __future__ import annotations

import dataclasses
import math
import os
import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ding.config.policy_sections import EVALUATOR
from ding.envs.base_env import COMMON_ENV_CONFIG
from ding.envs.env_manager import BaseEnvManager
from ding.errors import EnvManagerError
from ding.policy.base import EvalMode
from ding.utils.accepts import check_value
from ding.worker.eval_result import EvalResult
from ding.worker.eval_video import EvalVideos
from ding.worker.logger import LOGGER, duration_text

BOUND_KEY = "policy.eval.evaluator.fail_after_episode_steps"


class EpisodeBoundError(EnvManagerError):
    """An evaluator env played ``fail_after_episode_steps`` steps without ending its episode."""


def configured_episode_bound(policy_cfg: Mapping[str, Any]) -> int | None:
    """The policy config's ``eval.evaluator.fail_after_episode_steps``, checked (None when absent).

    >>> configured_episode_bound({'eval': {'evaluator': {'fail_after_episode_steps': 500}}})
    500
    """
    evaluator = (policy_cfg.get("eval") or {}).get("evaluator") or {}
    return episode_step_bound(evaluator.get("fail_after_episode_steps"))


def episode_step_bound(value: Any) -> int | None:
    """``policy.eval.evaluator.fail_after_episode_steps`` checked: an int >= 1, or None for no bound.

    >>> episode_step_bound(None), episode_step_bound(10_000)
    (None, 10000)
    """
    check_value(EVALUATOR, "fail_after_episode_steps", value, BOUND_KEY)
    return value


class InteractionSerialEvaluator:
    """Evaluate a policy's eval mode every ``eval_freq`` training iterations.

    Each evaluation resets every evaluator env and plays ``n_episode`` episodes, spread over the
    envs (env ``i`` plays ``n_episode // env_num`` of them, one more for the first
    ``n_episode % env_num`` envs). Abnormal episodes (``info['abnormal']``) are replayed, not counted.
    The return of an episode is ``info['eval_episode_return']`` at its end (the summed rewards if
    the env gives none). A mean above every earlier one is a new best: ``save_ckpt_fn('ckpt_best.pth.tar')``
    is called. The run should stop once the mean reaches ``stop_value``.

    ``video_dir`` records every evaluation episode as ``<video_dir>/eval_iter<train_iter>_env<i>_ep<k>.mp4``
    (see :mod:`ding.worker.eval_video`); the envs must record (``enable_save_replay``), as DingEnvWrapper's do.

    ``best_return`` is the best mean return of the run so far (a run that continues an earlier one), so only a
    better evaluation counts as a new best. An evaluation that takes longer than ``progress_interval`` seconds
    reports its progress through ``report`` (default: the ``ding.serial`` logger) every ``progress_interval``
    seconds: episodes done and to play, env steps, time, and the longest episode under way.
    ``fail_after_episode_steps`` (``policy.eval.evaluator.fail_after_episode_steps``; None: no bound) stops an
    evaluation in which an episode reaches that many steps without ending, with :class:`EpisodeBoundError`
    naming the env and the bound; an env whose own time limit ends (truncates) its episodes sooner never meets it.

    Example:
        >>> from functools import partial
        >>> from ding.envs.env_manager import create_env_manager
        >>> from ding.policy.dqn import DQNPolicy
        >>> from dizoo.classic_control.cartpole.envs import CartPoleEnv
        >>> env = create_env_manager({'type': 'base'}, [partial(CartPoleEnv, cfg={}) for _ in range(2)])
        >>> env.seed(0, dynamic_seed=False)
        >>> policy = DQNPolicy({'model': {'obs_shape': 4, 'action_shape': 2}})
        >>> evaluator = InteractionSerialEvaluator(env, policy.eval_mode, n_episode=3, stop_value=195, eval_freq=100)
        >>> evaluator.should_eval(0), evaluator.should_eval(50)
        (True, True)
        >>> stop, result = evaluator.eval(train_iter=0)
        >>> len(result.returns), result.is_best, stop, evaluator.should_eval(50), evaluator.should_eval(100)
        (3, True, False, False, True)
        >>> evaluator.close()
    """

    def __init__(
        self,
        env: BaseEnvManager,
        policy: EvalMode,
        n_episode: int,
        stop_value: float | None,
        eval_freq: int,
        max_episode_attempts: int = 10,
        video_dir: str | os.PathLike[str] | None = None,
        *,
        best_return: float | None = None,
        fail_after_episode_steps: int | None = None,
        report: Callable[[str], None] | None = None,
        progress_interval: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        check_value(COMMON_ENV_CONFIG, "n_evaluator_episode", n_episode, "env.n_evaluator_episode")
        check_value(COMMON_ENV_CONFIG, "stop_value", stop_value, "env.stop_value")
        check_value(EVALUATOR, "eval_freq", eval_freq, "policy.eval.evaluator.eval_freq")
        self._env = env
        self._policy = policy
        self._n_episode = n_episode
        self._stop_value = stop_value
        self._eval_freq = eval_freq
        self._max_attempts = max_episode_attempts
        self._bound = episode_step_bound(fail_after_episode_steps)
        self._last_eval_iter: int | None = None
        self._best = -math.inf if best_return is None else float(best_return)
        self._videos = EvalVideos(video_dir) if video_dir is not None else None
        self._report = report if report is not None else LOGGER.info
        self._progress_interval = progress_interval
        self._clock = clock

    @property
    def best_return(self) -> float | None:
        """The best mean return so far (None before the first evaluation)."""
        return None if self._best == -math.inf else self._best

    @property
    def last_eval_iter(self) -> int | None:
        return self._last_eval_iter

    def should_eval(self, train_iter: int) -> bool:
        """True at the first call and then once ``eval_freq`` iterations passed since the last evaluation."""
        if self._last_eval_iter is None:
            return True
        return train_iter != self._last_eval_iter and train_iter - self._last_eval_iter >= self._eval_freq

    def quotas(self) -> dict[int, int]:
        """Episodes each evaluator env plays per evaluation."""
        env_num = self._env.env_num
        base, extra = divmod(self._n_episode, env_num)
        return {env_id: base + (1 if env_id < extra else 0) for env_id in range(env_num)}

    def eval(
        self,
        save_ckpt_fn: Callable[[str], Any] | None = None,
        train_iter: int = 0,
        env_step: int = 0,
    ) -> tuple[bool, EvalResult]:
        """Play the episodes; return whether ``stop_value`` is reached, and the result."""
        start = time.monotonic()
        if self._videos is not None:
            self._videos.start(self._env, train_iter)
        try:
            episodes = self._play(train_iter)
        finally:
            if self._videos is not None:
                self._videos.finish()
        self._last_eval_iter = train_iter
        returns = [episode.value for episode in episodes]
        mean = float(np.mean(returns))
        is_best = mean > self._best
        if is_best:
            self._best = mean
            if save_ckpt_fn is not None:
                save_ckpt_fn("ckpt_best.pth.tar")
        result = EvalResult(
            train_iter=train_iter,
            env_step=env_step,
            returns=tuple(returns),
            stop_value=self._stop_value,
            is_best=is_best,
            duration=time.monotonic() - start,
            lengths=tuple(episode.length for episode in episodes),
            env_ids=tuple(episode.env_id for episode in episodes),
            videos=tuple(episode.video for episode in episodes if episode.video is not None),
        )
        return result.stop, result

    def _play(self, train_iter: int) -> list[_Episode]:
        env = self._env
        if not env.launched:
            env.launch()
        else:
            env.reset()
        left = {env_id: count for env_id, count in self.quotas().items() if count > 0}
        attempts = 0
        summed: dict[int, float] = {}
        steps: dict[int, int] = {}
        episodes: list[_Episode] = []
        progress = _Progress(self._n_episode, train_iter, self._clock, self._progress_interval)
        while left:
            progress.show(self._report, len(episodes), steps)
            ready = {env_id: obs for env_id, obs in env.ready_obs.items() if env_id in left}
            if ready:
                outputs = self._policy.forward(ready)
                timesteps = env.step({env_id: outputs[env_id]["action"] for env_id in ready})
            elif getattr(env, "in_flight_env_ids", []):
                timesteps = env.step({})
            else:
                raise EnvManagerError(
                    f"the evaluator's envs {sorted(left)} stopped before their episodes were played: they finished "
                    "env.manager.episode_num episodes; evaluation needs episode_num=inf"
                )
            for env_id, timestep in timesteps.items():
                if env_id not in left:
                    continue
                if timestep.info.get("abnormal", False):
                    summed.pop(env_id, None)
                    steps.pop(env_id, None)
                    if self._videos is not None:
                        self._videos.discard(env_id)
                    attempts += 1
                    if attempts > self._max_attempts:
                        raise EnvManagerError(f"evaluation gave up after {attempts} abnormal episodes")
                    continue
                summed[env_id] = summed.get(env_id, 0.0) + float(np.sum(timestep.reward))
                steps[env_id] = steps.get(env_id, 0) + 1
                progress.env_steps += 1
                if not timestep.done and self._bound is not None and steps[env_id] >= self._bound:
                    raise EpisodeBoundError(
                        f"evaluator env {env_id} played {steps[env_id]} steps without an episode end, the bound "
                        f"{BOUND_KEY}={self._bound}: the evaluation stops (give the env a time limit, such as "
                        "a time_limit wrapper or max_episode_steps in env_kwargs, or raise the bound)"
                    )
                if timestep.done:
                    video = None if self._videos is None else self._videos.episode_done(env_id)
                    value = _episode_return(timestep.info, summed.pop(env_id))
                    episodes.append(_Episode(env_id, value, steps.pop(env_id), video))
                    left[env_id] -= 1
                    if left[env_id] == 0:
                        del left[env_id]
        return episodes

    def close(self) -> None:
        self._env.close()


class _Progress:
    """What an evaluation under way reports: a line every ``interval`` seconds, the first after ``interval``."""

    def __init__(self, n_episode: int, train_iter: int, clock: Callable[[], float], interval: float) -> None:
        self.n_episode = n_episode
        self.train_iter = train_iter
        self.env_steps = 0
        self._clock = clock
        self._start = self._last = clock()
        self._interval = interval

    def show(self, report: Callable[[str], None], done: int, under_way: Mapping[int, int]) -> None:
        now = self._clock()
        if now - self._last < self._interval:
            return
        self._last = now
        text = (
            f"evaluation at train iter {self.train_iter} under way: {done}/{self.n_episode} episodes, "
            f"{self.env_steps} env steps, {duration_text(now - self._start)}"
        )
        if under_way:
            env_id = max(under_way, key=lambda i: (under_way[i], -i))
            text += f"; longest episode under way: {under_way[env_id]} steps (env {env_id})"
        report(text)


@dataclasses.dataclass(frozen=True)
class _Episode:
    env_id: int
    value: float
    length: int
    video: str | None


def _episode_return(info: Mapping[str, Any], summed: float) -> float:
    value = info.get("eval_episode_return", summed)
    return float(np.sum(value))
