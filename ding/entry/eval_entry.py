"""``eval_checkpoint``: evaluate a saved checkpoint on the evaluator envs a config names."""

from __future__ import annotations

import os
import pathlib
from typing import Any

from ding.entry.loaded_policy import restore_policy
from ding.entry.run_output import pipeline_output
from ding.entry.utils import (
    compile_for_run,
    create_env_managers,
    load_input_config,
    seed_env_managers,
    torch_thread_count,
)
from ding.entry.video import VideoArg, video_dirs, without_env_recording
from ding.utils.checkpoint_files import checkpoint_counter
from ding.worker import EvalResult, InteractionSerialEvaluator
from ding.worker.evaluator import configured_episode_bound


def eval_checkpoint(
    input_cfg: Any,
    load_path: str | os.PathLike[str],
    seed: int | None = None,
    n_episode: int | None = None,
    *,
    torch_threads: int | None = 1,
    video: VideoArg = None,
) -> EvalResult:
    """Load ``load_path`` into the config's policy and play ``n_episode`` (default ``env.n_evaluator_episode``)
    greedy episodes on its evaluator envs, seeded like a training run's evaluations with ``seed`` (default:
    the config's ``seed``, so a run's ``total_config.py`` and ``ckpt_best.pth.tar`` replay its best evaluation).

    The result holds each episode's return, length and env. ``video`` records each episode as
    ``<dir>/eval_iter<N>_env<i>_ep<k>.mp4`` (``N`` the checkpoint's train iteration): a directory, True for
    ``videos/`` in the checkpoint's experiment directory (two levels up), False for none, or None for the
    config's ``env.replay_path``. A missing file, a file that is no checkpoint, or one whose model does not fit
    the config's model raises an error naming the file. ``torch_threads`` is as for
    :func:`~ding.entry.serial_entry.serial_pipeline`. An evaluation that takes a while logs its progress (on
    stderr unless logging is configured), and ``policy.eval.evaluator.fail_after_episode_steps`` bounds its episodes.
    """
    with torch_thread_count(torch_threads), pipeline_output():  # an evaluation's progress lines, as a run's
        return _eval_checkpoint(input_cfg, load_path, seed, n_episode, video)


def _eval_checkpoint(
    input_cfg: Any, load_path: str | os.PathLike[str], seed: int | None, n_episode: int | None, video: VideoArg
) -> EvalResult:
    main, create = load_input_config(input_cfg)
    cfg, _ = compile_for_run(main, create, seed, None)
    videos = video_dirs(cfg, pathlib.Path(load_path).parent.parent, video, None)
    bound = configured_episode_bound(cfg.policy)
    policy, state = restore_policy(cfg, load_path)
    if n_episode is None:
        n_episode = cfg.env.n_evaluator_episode
    _, env = create_env_managers(without_env_recording(cfg), collect=False)
    assert env is not None
    try:
        seed_env_managers(cfg.seed, cfg, None, env)
        evaluator = InteractionSerialEvaluator(
            env,
            policy.eval_mode,
            n_episode,
            cfg.env.stop_value,
            eval_freq=1,
            video_dir=videos.evaluator,
            fail_after_episode_steps=bound,
        )
        _, result = evaluator.eval(
            train_iter=checkpoint_counter(state, "last_iter", load_path),
            env_step=checkpoint_counter(state, "last_step", load_path),
        )
    finally:
        env.close()
    return result
