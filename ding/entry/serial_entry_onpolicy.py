"""``serial_pipeline_onpolicy``: train an on-policy policy (PPO) on the env a config names, evaluating as it goes.

The run is :data:`~ding.entry.serial_entry.serial_pipeline`'s (same experiment directory, checkpoints,
logs, stop conditions, Ctrl-C handling and result) with an on-policy loop: every iteration collects
``policy.collect.n_sample`` fresh env steps with the current policy (cutting the envs' unfinished
trajectories at the end, so no sample outlives its policy), then learns from exactly those samples
for ``policy.learn.epoch_per_collect`` epochs of shuffled minibatches of ``policy.learn.batch_size``.
One training iteration is one minibatch update; ``eval_freq`` counts those. ``load_path`` resumes
from a checkpoint and a status line goes to stderr, as for ``serial_pipeline``.
"""

from __future__ import annotations

import pathlib
from collections.abc import Mapping
from typing import Any

import numpy as np

from ding.entry.serial_entry import SerialPipeline, SerialResult, SerialRun
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


class OnPolicyRun(SerialRun):
    """The on-policy training loop; everything else is :class:`~ding.entry.serial_entry.SerialRun`'s."""

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


serial_pipeline_onpolicy = SerialPipeline("serial_onpolicy", OnPolicyRun, OnPolicySerialCollector)
"""Train an on-policy policy (PPO, A2C) and evaluate it as the config says; the arguments, experiment directory and
reproducibility are :data:`~ding.entry.serial_entry.serial_pipeline`'s (:meth:`SerialPipeline.__call__`), and
``seed`` seeds the minibatch order too. Returns a :class:`~ding.entry.serial_entry.SerialResult`."""
