"""``serial_pipeline_onpolicy``: train an on-policy policy (PPO) on the env a config names, evaluating as it goes.

The run is :func:`~ding.entry.serial_entry.serial_pipeline`'s (same experiment directory, checkpoints,
logs, stop conditions, Ctrl-C handling and result) with an on-policy loop: every iteration collects
``policy.collect.n_sample`` fresh env steps with the current policy (cutting the envs' unfinished
trajectories at the end, so no sample outlives its policy), then learns from exactly those samples
for ``policy.learn.epoch_per_collect`` epochs of shuffled minibatches of ``policy.learn.batch_size``.
One training iteration is one minibatch update; ``eval_freq`` counts those. ``load_path`` resumes
from a checkpoint and a status line goes to stderr, as for ``serial_pipeline``.
"""

from __future__ import annotations

import os
import pathlib
import time
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from ding.entry.serial_entry import SerialResult, _check_limit, _Run, _serial_pipeline
from ding.entry.utils import load_input_config, torch_thread_count
from ding.entry.video import VideoArg
from ding.worker import SampleSerialCollector


class OnPolicySerialCollector(SampleSerialCollector):
    """Collect ``n_sample`` env steps per call, then hand over every env's unfinished trajectory as well.

    A trajectory cut at the end of a call goes to the policy's ``get_train_sample`` as over
    (``episode_over=True``; its last transition is not a termination, so the policy bootstraps it),
    and the next call starts a new trajectory where the episode goes on.
    """

    def collect(
        self, n_sample: int | None = None, train_iter: int = 0, policy_kwargs: Mapping[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        if n_sample is None:
            n_sample = self._policy.n_sample
        if not isinstance(n_sample, int) or isinstance(n_sample, bool) or n_sample < 1:
            raise ValueError(f"n_sample must be an int >= 1, got {n_sample!r}")
        if not self._env.launched:
            self._env.launch()
        kwargs = dict(policy_kwargs or {})
        samples: list[dict[str, Any]] = []
        start = self.stats.env_step
        while self.stats.env_step - start < n_sample:
            for env_id, timestep in self._step_envs(kwargs).items():
                samples.extend(self._on_timestep(env_id, timestep))
        for traj in self._traj.values():
            if traj:
                samples.extend(self._policy.get_train_sample(traj, True))
                traj.clear()
        self.stats.sample_count += len(samples)
        return samples


class _OnPolicyRun(_Run):
    """The on-policy training loop; everything else is :class:`~ding.entry.serial_entry._Run`'s."""

    seed = 0

    def loop(self) -> bool:
        """Collect, learn for some epochs and evaluate until a stop condition; True when ``stop_value`` was reached."""
        learner, collector, buffer = self.learner, self.collector, self.buffer
        collect_mode = self.policy.collect_mode
        batch_size = learner.batch_size
        learn_mode = self.policy.learn_mode
        epochs = learn_mode.update_per_collect
        rng = np.random.default_rng(self.seed)
        while True:
            if self.evaluator.should_eval(learner.train_iter) and self.evaluate():
                return True
            kwargs = collect_mode.collect_kwargs(collector.env_step)
            samples = collector.collect(train_iter=learner.train_iter, policy_kwargs=kwargs)
            self.sync_counters()
            buffer.clear()
            buffer.push(samples)
            for epoch in range(epochs):
                learn_mode.prepare_epoch(samples, epoch)
                order = rng.permutation(len(samples))
                for begin in range(0, len(samples), batch_size):
                    learner.train([samples[i] for i in order[begin : begin + batch_size]], collector.env_step)
                    if self.max_train_iter is not None and learner.train_iter >= self.max_train_iter:
                        break
                else:
                    continue
                break
            self.show_progress()
            if learner.train_iter >= self.next_collector_log:
                self.next_collector_log = learner.train_iter + self.settings["log_every"]
                self.log_collector(kwargs)
            if self.limit_reached():
                return False

    def execute(self, exp_dir: pathlib.Path, seed: int, stop_value: float | None, started: float) -> SerialResult:
        self.seed = seed  # seeds the minibatch order
        return super().execute(exp_dir, seed, stop_value, started)


def serial_pipeline_onpolicy(
    input_cfg: Any,
    seed: int = 0,
    max_train_iter: int | None = None,
    max_env_step: int | None = None,
    exp_name: str | None = None,
    *,
    root: str | os.PathLike[str] | None = None,
    model: torch.nn.Module | None = None,
    torch_threads: int | None = 1,
    load_path: str | os.PathLike[str] | None = None,
    progress: bool = True,
    video: VideoArg = None,
    collector_video: VideoArg = None,
) -> SerialResult:
    """Train and evaluate an on-policy policy as the config says; return a :class:`SerialResult`.

    Arguments, experiment directory and reproducibility are those of
    :func:`~ding.entry.serial_entry.serial_pipeline` (``load_path`` resumes from a checkpoint,
    ``progress`` shows the status line on stderr, ``video`` and ``collector_video`` record episodes); the
    minibatch order is seeded by ``seed`` too.
    """
    started = time.monotonic()
    main, create = load_input_config(input_cfg)
    _check_limit(max_train_iter, "max_train_iter")
    _check_limit(max_env_step, "max_env_step")
    with torch_thread_count(torch_threads):
        return _serial_pipeline(
            main,
            create,
            seed,
            max_train_iter,
            max_env_step,
            exp_name,
            root,
            model,
            started,
            run_cls=_OnPolicyRun,
            collector_cls=OnPolicySerialCollector,
            load_path=load_path,
            progress=progress,
            video=video,
            collector_video=collector_video,
            mode="serial_onpolicy",
        )
