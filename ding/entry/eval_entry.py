"""``eval_checkpoint``: evaluate a saved checkpoint on the evaluator envs a config names."""

from __future__ import annotations

import os
from typing import Any

from ding.entry.utils import (
    compile_for_run,
    create_env_managers,
    create_policy,
    load_input_config,
    seed_env_managers,
    set_pkg_seed,
    torch_thread_count,
)
from ding.worker import CheckpointError, EvalResult, InteractionSerialEvaluator, load_checkpoint


def eval_checkpoint(
    input_cfg: Any,
    load_path: str | os.PathLike[str],
    seed: int | None = None,
    n_episode: int | None = None,
    *,
    torch_threads: int | None = 1,
) -> EvalResult:
    """Load ``load_path`` into the config's policy and play ``n_episode`` (default ``env.n_evaluator_episode``)
    greedy episodes on its evaluator envs, seeded like a training run's evaluations with ``seed`` (default:
    the config's ``seed``, so a run's ``total_config.py`` and ``ckpt_best.pth.tar`` replay its best evaluation).

    A missing file, a file that is no checkpoint, or one whose model does not fit the config's model
    raises an error naming the file. ``torch_threads`` is as for :func:`~ding.entry.serial_entry.serial_pipeline`.
    """
    with torch_thread_count(torch_threads):
        return _eval_checkpoint(input_cfg, load_path, seed, n_episode)


def _eval_checkpoint(
    input_cfg: Any, load_path: str | os.PathLike[str], seed: int | None, n_episode: int | None
) -> EvalResult:
    main, create = load_input_config(input_cfg)
    cfg, _ = compile_for_run(main, create, seed, None)
    state = load_checkpoint(load_path)
    set_pkg_seed(cfg.seed)
    policy = create_policy(cfg, cfg.seed)
    try:
        policy.eval_mode.load_state_dict(state)
    except RuntimeError as err:
        lines = [line.strip() for line in str(err).splitlines() if line.strip()]
        first = lines[1] if len(lines) > 1 else lines[0] if lines else type(err).__name__
        raise CheckpointError(f"checkpoint {load_path} does not fit the model of this config: {first}") from err
    if n_episode is None:
        n_episode = cfg.env.n_evaluator_episode
    _, env = create_env_managers(cfg, collect=False)
    assert env is not None
    try:
        seed_env_managers(cfg.seed, cfg, None, env)
        evaluator = InteractionSerialEvaluator(env, policy.eval_mode, n_episode, cfg.env.stop_value, eval_freq=1)
        _, result = evaluator.eval(train_iter=int(state.get("last_iter", 0)), env_step=int(state.get("last_step", 0)))
    finally:
        env.close()
    return result
