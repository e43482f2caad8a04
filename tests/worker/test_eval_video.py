"""Evaluation videos: one mp4 per evaluator episode, named by train iteration, env and episode, never overwritten."""

from __future__ import annotations

import pathlib
import re
from functools import partial
from typing import Any

import pytest

from ding.envs.env_manager import create_env_manager
from ding.errors import EnvManagerError
from ding.policy.base import EvalMode
from ding.worker import InteractionSerialEvaluator
from ding.worker.eval_video import eval_video_name
from dizoo.classic_control.cartpole.envs import CartPoleEnv
from tests.utils.test_video_files import frame_count
from tests.worker.envs import count_env

NAME = re.compile(r"eval_iter(\d{6})_env(\d+)_ep(\d+)(_run\d+)?\.mp4")


def alternating() -> EvalMode:
    """Push left or right by the pole's angle: episodes of different lengths, deterministic."""

    def forward(obs: Any) -> dict[int, dict[str, Any]]:
        return {env_id: {"action": int(o[2] > 0.05)} for env_id, o in obs.items()}

    return EvalMode(forward=forward, load_state_dict=lambda state: None)


class FailingCartPole(CartPoleEnv):
    """CartPole whose instance raises at its ``fail_at``-th step (fault injection)."""

    fail_at = 3

    def __init__(self, cfg: Any = None) -> None:
        super().__init__(cfg)
        self.steps = 0

    def step(self, action: Any) -> Any:
        self.steps += 1
        if self.steps == self.fail_at:
            raise RuntimeError("injected failure")
        return super().step(action)


def evaluator(
    kind: str, video_dir: pathlib.Path | None, env_num: int = 2, n_episode: int = 5, env_cls: Any = None
) -> InteractionSerialEvaluator:
    env = create_env_manager({"type": kind}, [partial(env_cls or CartPoleEnv, cfg={}) for _ in range(env_num)])
    env.seed(0, dynamic_seed=False)
    return InteractionSerialEvaluator(env, alternating(), n_episode, None, eval_freq=10, video_dir=video_dir)


@pytest.mark.parametrize("kind", ["base", "subprocess"])
def test_each_evaluation_episode_is_one_video(kind: str, tmp_path: pathlib.Path) -> None:
    plain = evaluator(kind, None)
    recorded = evaluator(kind, tmp_path / "videos")
    try:
        expected = plain.eval(train_iter=100)[1]
        _, result = recorded.eval(train_iter=100)
    finally:
        plain.close()
        recorded.close()
    assert result.returns == expected.returns and result.lengths == expected.lengths  # recording changes nothing
    assert len(result.videos) == 5 and len(set(result.lengths)) > 1
    videos = sorted((tmp_path / "videos").iterdir())
    assert [v.name for v in videos] == sorted(pathlib.Path(v).name for v in result.videos)  # nothing else there
    per_env: dict[int, int] = {}
    for video, env_id, length in zip(result.videos, result.env_ids, result.lengths, strict=True):
        per_env[env_id] = per_env.get(env_id, 0) + 1
        assert pathlib.Path(video).name == f"eval_iter000100_env{env_id}_ep{per_env[env_id]}.mp4"
        assert frame_count(video) == length + 1  # the reset frame and one per step
    assert per_env == {0: 3, 1: 2}


def test_evaluations_never_overwrite_videos(tmp_path: pathlib.Path) -> None:
    ev = evaluator("base", tmp_path, env_num=1, n_episode=1)
    try:
        first = ev.eval(train_iter=0)[1].videos
        before = pathlib.Path(first[0]).read_bytes()
        second = ev.eval(train_iter=40)[1].videos
        again = ev.eval(train_iter=40)[1].videos  # a re-run at the same train iteration
    finally:
        ev.close()
    assert [pathlib.Path(p).name for p in first + second + again] == [
        "eval_iter000000_env0_ep1.mp4",
        "eval_iter000040_env0_ep1.mp4",
        "eval_iter000040_env0_ep1_run2.mp4",
    ]
    assert pathlib.Path(first[0]).read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(pathlib.Path(p).name for p in first + second + again)


def test_an_abnormal_episode_leaves_no_video(tmp_path: pathlib.Path) -> None:
    ev = evaluator("base", tmp_path, env_num=1, n_episode=2, env_cls=FailingCartPole)
    try:
        _, result = ev.eval(train_iter=7)
    finally:
        ev.close()
    assert [pathlib.Path(p).name for p in result.videos] == [
        "eval_iter000007_env0_ep1.mp4",
        "eval_iter000007_env0_ep2.mp4",
    ]
    assert [frame_count(p) for p in result.videos] == [n + 1 for n in result.lengths]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(pathlib.Path(p).name for p in result.videos)


def test_an_env_that_does_not_record_is_an_error(tmp_path: pathlib.Path) -> None:
    env = create_env_manager({"type": "base"}, [count_env()])
    always_left = EvalMode(forward=lambda obs: {i: {"action": 0} for i in obs}, load_state_dict=lambda state: None)
    ev = InteractionSerialEvaluator(env, always_left, 1, None, eval_freq=1, video_dir=tmp_path)
    with pytest.raises(EnvManagerError, match=r"evaluator env 0 ended an episode but wrote no video"):
        ev.eval()
    ev.close()
    assert list(tmp_path.iterdir()) == []  # the staging directory is gone


def test_names_sort_by_train_iteration_and_parse_back() -> None:
    match = NAME.fullmatch(eval_video_name(1234, 3, 2, run=5))
    assert match is not None and match.groups() == ("001234", "3", "2", "_run5")
    names = [eval_video_name(100, 0, 1), eval_video_name(40, 0, 1)]
    assert sorted(names) == ["eval_iter000040_env0_ep1.mp4", "eval_iter000100_env0_ep1.mp4"]
