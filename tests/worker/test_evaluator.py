"""InteractionSerialEvaluator: episodes spread over envs, returns, best and stop, abnormal episodes replayed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from ding.envs.env_manager import create_env_manager
from ding.errors import ConfigError, EnvManagerError
from ding.policy.base import EvalMode
from ding.worker import InteractionSerialEvaluator
from ding.worker.evaluator import EpisodeBoundError
from tests.worker.envs import count_env


def always(action: int) -> EvalMode:
    def forward(obs: Mapping[int, Any]) -> dict[int, dict[str, Any]]:
        return {env_id: {"action": action} for env_id in obs}

    return EvalMode(forward=forward, load_state_dict=lambda state: None)


def evaluator_for(
    env_fns: list[Any],
    n_episode: int = 5,
    stop_value: float | None = None,
    eval_freq: int = 10,
    evaluator: dict[str, Any] | None = None,
    **manager: Any,
) -> InteractionSerialEvaluator:
    env = create_env_manager({"type": "base", **manager}, env_fns)
    env.seed(0, dynamic_seed=False)
    return InteractionSerialEvaluator(env, always(0), n_episode, stop_value, eval_freq, **(evaluator or {}))


def test_episodes_are_spread_over_the_envs() -> None:
    evaluator = evaluator_for([count_env(episode_len=2 + i, reward=1.0) for i in range(3)], n_episode=5)
    assert evaluator.quotas() == {0: 2, 1: 2, 2: 1}
    stop, result = evaluator.eval(train_iter=7, env_step=70)
    assert sorted(result.returns) == [2.0, 2.0, 3.0, 3.0, 4.0]
    assert (result.train_iter, result.env_step, stop, result.stop) == (7, 70, False, False)
    assert result.mean == pytest.approx(2.8) and result.max == 4.0 and result.min == 2.0
    evaluator.close()


def test_returns_come_from_eval_episode_return() -> None:
    evaluator = evaluator_for([count_env(info_return=42.0)], n_episode=2)
    assert evaluator.eval()[1].returns == (42.0, 42.0)
    evaluator.close()


def test_best_and_stop_value() -> None:
    saved: list[str] = []
    evaluator = evaluator_for([count_env(episode_len=5)], n_episode=1, stop_value=5, eval_freq=10)
    assert evaluator.best_return is None and evaluator.should_eval(0)
    stop, result = evaluator.eval(saved.append, train_iter=0)
    assert stop and result.is_best and saved == ["ckpt_best.pth.tar"] and evaluator.best_return == 5.0
    stop, result = evaluator.eval(saved.append, train_iter=10)
    assert stop and not result.is_best and saved == ["ckpt_best.pth.tar"]  # not better: nothing saved
    assert [evaluator.should_eval(i) for i in (10, 15, 19, 20)] == [False, False, False, True]
    assert evaluator.last_eval_iter == 10
    evaluator.close()


def test_no_stop_value_never_stops() -> None:
    evaluator = evaluator_for([count_env()], n_episode=1, stop_value=None)
    assert evaluator.eval()[0] is False
    evaluator.close()


def test_every_evaluation_starts_from_the_same_env_states() -> None:
    evaluator = evaluator_for([count_env(episode_len=3)], n_episode=1)
    first = evaluator.eval(train_iter=0)[1]
    second = evaluator.eval(train_iter=10)[1]
    assert first.returns == second.returns
    evaluator.close()


def test_abnormal_episodes_are_played_again() -> None:
    evaluator = evaluator_for([count_env(fail_at=2), count_env()], n_episode=4)
    assert evaluator.eval()[1].returns == (5.0, 5.0, 5.0, 5.0)
    evaluator.close()


def test_envs_that_stop_early_are_an_error() -> None:
    evaluator = evaluator_for([count_env()], n_episode=2, episode_num=1)
    with pytest.raises(EnvManagerError, match=r"envs \[0\] stopped before their episodes were played"):
        evaluator.eval()
    evaluator.close()


def test_bad_settings() -> None:
    env = create_env_manager({"type": "base"}, [count_env()])
    with pytest.raises(ConfigError, match=r"env\.n_evaluator_episode must be a positive int, got 0"):
        InteractionSerialEvaluator(env, always(0), 0, None, 10)
    with pytest.raises(ConfigError, match=r"policy\.eval\.evaluator\.eval_freq must be a positive int, got 0"):
        InteractionSerialEvaluator(env, always(0), 1, None, 0)
    with pytest.raises(ConfigError, match=r"env\.stop_value must be a number other than NaN or None .*, got 'high'"):
        InteractionSerialEvaluator(env, always(0), 1, "high", 1)  # type: ignore[arg-type]
    env.close()


def test_a_long_evaluation_reports_its_progress() -> None:
    now = [0.0]

    def clock() -> float:
        now[0] += 0.5  # every look at the clock: half a second later
        return now[0]

    lines: list[str] = []
    env = create_env_manager({"type": "base"}, [count_env(episode_len=10), count_env(episode_len=30)])
    env.seed(0, dynamic_seed=False)
    evaluator = InteractionSerialEvaluator(
        env, always(0), 4, None, 10, report=lines.append, progress_interval=5.0, clock=clock
    )
    _, result = evaluator.eval(train_iter=40)
    assert result.lengths == (10, 10, 30, 30)
    assert len(lines) == 6  # 60 rounds of stepping, a look at the clock each, 0.5 s apart: a line every 5 s
    assert lines[0] == (
        "evaluation at train iter 40 under way: 0/4 episodes, 18 env steps, 5 s; "
        "longest episode under way: 9 steps (env 0)"
    )
    assert lines[-1] == (
        "evaluation at train iter 40 under way: 3/4 episodes, 79 env steps, 30 s; "
        "longest episode under way: 29 steps (env 1)"
    )
    evaluator.close()


def test_an_episode_that_never_ends_stops_the_evaluation_at_the_bound() -> None:
    never_ends = [count_env(episode_len=5), count_env(episode_len=10**9)]
    evaluator = evaluator_for(never_ends, n_episode=2, evaluator={"fail_after_episode_steps": 100})
    with pytest.raises(
        EpisodeBoundError,
        match=r"^evaluator env 1 played 100 steps without an episode end, the bound "
        r"policy\.eval\.evaluator\.fail_after_episode_steps=100: the evaluation stops",
    ):
        evaluator.eval()
    evaluator.close()
    bounded = evaluator_for([count_env(episode_len=100)], n_episode=1, evaluator={"fail_after_episode_steps": 100})
    assert bounded.eval()[1].lengths == (100,)
    bounded.close()


@pytest.mark.parametrize("bound", [0, 1.5, True, "100"])
def test_bad_episode_bounds(bound: object) -> None:
    env = create_env_manager({"type": "base"}, [count_env()])
    with pytest.raises(
        ConfigError, match=r"fail_after_episode_steps must be a positive int or None \(None: unbounded\), got "
    ):
        InteractionSerialEvaluator(env, always(0), 1, None, 1, fail_after_episode_steps=bound)  # type: ignore[arg-type]
    env.close()


def test_a_best_return_to_beat() -> None:
    saved: list[str] = []
    evaluator = evaluator_for([count_env(episode_len=5)], n_episode=1, evaluator={"best_return": 5.0})
    _, result = evaluator.eval(saved.append)
    assert not result.is_best and saved == [] and evaluator.best_return == 5.0
    evaluator.close()
