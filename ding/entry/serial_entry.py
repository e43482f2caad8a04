"""``serial_pipeline``: train an off-policy policy (DQN) on the env a config names, evaluating as it goes.

One process runs everything in turn: the collector's env manager gathers samples into the replay
buffer, the learner updates the policy from sampled batches, and every ``eval_freq`` updates the
evaluator's env manager plays greedy episodes. The run ends when the evaluation reaches
``env.stop_value``, at ``max_env_step`` / ``max_train_iter`` (after one more evaluation of the final
policy), or on Ctrl-C or SIGTERM (a checkpoint is saved, the envs are closed; see
:mod:`ding.worker.interrupt`). While it runs, a status line (env steps, episodes, train
iterations, last eval return) goes to stderr: redrawn in place on a terminal, otherwise printed every
few seconds.

The replay buffer is planned from the env's spec and the policy (:mod:`ding.worker.buffer_plan`): frame-stack
observations get the frame-sharing buffer, which stores each frame once; others the naive one. A buffer whose bytes
at capacity do not fit in the memory available is refused, with the numbers and the key to change, before any env
runs.

``load_path`` resumes from a checkpoint the learner wrote (``ckpt/iteration_<N>.pth.tar``,
``ckpt/ckpt_best.pth.tar``): the policy's state as saved (model, optimizer, target model, update
count), the train iteration and the env step and episode counters continue from the checkpoint's
``last_iter``, ``last_step`` and ``last_episode``, and ``max_train_iter`` / ``max_env_step`` count
from zero as before (so they must lie beyond the checkpoint's counters). The replay buffer is saved
in the ``iteration_<N>`` checkpoints when ``policy.other.replay_buffer.save_in_checkpoint`` is True, and a
checkpoint that holds one restores it; otherwise a resumed off-policy run refills it before its first update.

The experiment directory (``<root>/<exp_name>``, or a fresh ``<exp_name>_<yymmdd_HHMMSS>`` beside it when it holds
an earlier run's files; a resume from its newest checkpoint continues in it: see :mod:`ding.entry.run_dir`; no run
deletes or overwrites an earlier run's file) receives:

- ``total_config.py``: the compiled config (``ding.config.read_config`` loads it and
  ``compile_config`` gives the same config again);
- ``ckpt/ckpt_best.pth.tar`` (the best evaluation so far), ``ckpt/iteration_<N>.pth.tar`` (every
  ``policy.learn.learner.hook.save_ckpt_after_iter`` updates, every ``save_ckpt_after_minutes`` of wall
  time when set, and at the end of the run, also an interrupted one or one an env failure stopped);
- ``log/serial_logger.txt``, ``log/eval.csv`` and a tensorboard event file in ``log/serial/``.

``video`` (or the config's ``env.replay_path``) records every evaluation episode as an mp4 and
``collector_video`` the collector's episodes, apart (see :mod:`ding.entry.video`).
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
import signal
import time
from typing import Any

import torch
from easydict import EasyDict

from ding.config.policy_sections import EVALUATOR, LEARNER_HOOK
from ding.config.writer import config_source, save_config
from ding.entry.run_dir import CONFIG_FILE, Resumed, open_run_dir
from ding.entry.run_session import run_session
from ding.entry.utils import (
    compile_for_run,
    create_env_managers,
    create_policy,
    load_input_config,
    seed_env_managers,
    set_pkg_seed,
    torch_thread_count,
)
from ding.entry.video import VideoArg, record_collector, video_dirs, without_env_recording
from ding.envs.from_config import env_class
from ding.envs.probe import spec_trace_of
from ding.errors import ConfigError, EnvManagerError
from ding.utils.accepts import plain_defaults
from ding.utils.checkpoint_files import CKPT_BEST, checkpoint_counter, load_checkpoint
from ding.utils.memory import mem_available
from ding.worker import (
    BaseLearner,
    EvalResult,
    ExperimentLogger,
    InteractionSerialEvaluator,
    SampleSerialCollector,
)
from ding.worker.buffer_plan import (
    DEFAULT_SIZE,
    FRAME_STACK,
    ReplayPlan,
    build_replay_buffer,
    check_replay_memory,
    plan_replay_buffer,
)
from ding.worker.evaluator import configured_episode_bound
from ding.worker.interrupt import exit_status, signal_of
from ding.worker.learner import REPLAY_BUFFER_KEY, load_policy_state, load_replay_buffer, stored_best_return
from ding.worker.logger import ProgressLine
from ding.worker.naive_replay import NaiveReplayBuffer, ReplayBuffer, save_in_checkpoint
from ding.worker.prioritized_buffer import prioritized_learn_mode
from ding.worker.transitions import transition_collect_mode


@dataclasses.dataclass(frozen=True)
class SerialResult:
    """What a training run achieved and where it left its files."""

    exp_dir: pathlib.Path
    seed: int
    stop_value: float | None
    stop_value_reached: bool
    best_eval_return: float | None
    last_eval_return: float | None
    env_step: int
    train_iter: int
    wall_time: float
    interrupted: bool = False
    stop_signal: int | None = None  # the signal that interrupted the run (SIGINT, SIGTERM)

    @property
    def ckpt_best(self) -> pathlib.Path:
        return self.exp_dir / "ckpt" / CKPT_BEST

    @property
    def exit_status(self) -> int:
        """0, or ``128 + signal`` for a run a signal stopped (130 for SIGINT, 143 for SIGTERM)."""
        if not self.interrupted:
            return 0
        return exit_status(signal.SIGINT if self.stop_signal is None else self.stop_signal)

    def summary(self) -> str:
        """One line for people.

        >>> SerialResult(pathlib.Path('exp'), 0, 195, True, 200.0, 200.0, 9000, 4500, 12.34).summary()
        'seed 0: reached stop_value 195 (best eval return 200.00) at env step 9000, train iter 4500 in 12.3 s; exp'
        """
        if self.interrupted:
            outcome = "interrupted"
            if self.stop_signal is not None:
                outcome += f" by {signal.Signals(self.stop_signal).name}"
        elif self.stop_value_reached:
            outcome = f"reached stop_value {self.stop_value}"
        elif self.stop_value is None:
            outcome = "finished (no stop_value)"
        else:
            outcome = f"stopped before stop_value {self.stop_value}"
        best = "none" if self.best_eval_return is None else f"{self.best_eval_return:.2f}"
        return (
            f"seed {self.seed}: {outcome} (best eval return {best}) at env step {self.env_step}, "
            f"train iter {self.train_iter} in {self.wall_time:.1f} s; {self.exp_dir}"
        )


@dataclasses.dataclass(frozen=True)
class SerialPipeline:
    """A serial training pipeline, called as a function: :data:`serial_pipeline` trains off-policy policies from a
    replay buffer, ``serial_pipeline_onpolicy`` (:mod:`ding.entry.serial_entry_onpolicy`) on-policy ones. Both take
    the same arguments and write the same experiment directory; they differ in their training loop (``run_cls``)
    and collector (``collector_cls``). ``mode`` is the pipeline's ``ding -m`` mode: a policy it does not train is
    refused before anything is built."""

    mode: str
    run_cls: type[SerialRun]
    collector_cls: type[SampleSerialCollector]

    @run_session
    def __call__(
        self,
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
        """Train and evaluate what the config names; return a :class:`SerialResult`.

        ``input_cfg`` is a config file path or a ``(main_config, create_config)`` pair. The experiment
        directory is ``exp_name`` when given, else the config's ``exp_name`` with ``_seed<seed>``
        (replacing such a suffix the name has), under ``root`` (default: the current directory); when it holds an
        earlier run's files the run writes ``<exp_name>_<yymmdd_HHMMSS>`` beside it instead (the result's ``exp_dir``
        and the log say which), unless it resumes from that run's newest checkpoint (see :mod:`ding.entry.run_dir`).
        Nothing an earlier run wrote is deleted or overwritten. The same seed
        gives the same run: Python's, numpy's and torch's generators, the envs (each env its own seed from
        ``seed``, per role; collector envs a new episode seed per reset, evaluator envs fixed ones: see
        :func:`~ding.entry.utils.seed_env_managers`), exploration and replay sampling are all seeded.

        ``model`` replaces the model the policy would build from ``policy.model`` (its obs and action
        shapes must still match the env's). ``torch_threads`` is torch's intra-op thread count during the
        run (restored afterwards; None leaves it alone). One thread is fastest for the small models of
        classic-control tasks and keeps torch from competing with env worker processes for the cores.

        ``load_path`` is a checkpoint to resume from (see the module docstring); the newest checkpoint of the
        experiment directory continues that run in place (its files kept, its logs appended to). A missing
        file, a directory, one that is no checkpoint (or would run code when unpickled) or whose model does not fit
        raises :class:`~ding.worker.CheckpointError`, and counters already at a limit a :class:`ConfigError`,
        before anything is written. ``progress`` shows the status line on stderr.

        ``video`` is the directory for an mp4 of every evaluation episode (True: ``<exp_dir>/videos``; None:
        ``env.replay_path``; False: none), ``collector_video`` the one for the collector's episodes (default none).
        """
        started = time.monotonic()
        main, create = load_input_config(input_cfg)
        _check_limit(max_train_iter, "max_train_iter")
        _check_limit(max_env_step, "max_env_step")
        with torch_thread_count(torch_threads):
            cfg, names = compile_for_run(main, create, seed, exp_name, mode=self.mode)
            seed = cfg.seed
            root_dir = pathlib.Path(root if root is not None else os.getcwd())
            set_pkg_seed(seed)
            policy = create_policy(cfg, seed, model)
            settings = _pipeline_settings(cfg)
            video_dirs(cfg, root_dir / cfg.exp_name, video, collector_video)  # refused before anything is written
            buffer, plan = _replay_buffer(cfg, policy, seed)
            batch_size = policy.learn_mode.batch_size
            if batch_size > buffer.capacity:
                raise ConfigError(
                    f"policy.learn.batch_size {batch_size} exceeds policy.other.replay_buffer.replay_buffer_size "
                    f"{buffer.capacity}: a batch could never be drawn"
                )
            resumed = (
                None if load_path is None else _resume_state(policy, load_path, max_train_iter, max_env_step, buffer)
            )
            run_dir = open_run_dir(
                root_dir, cfg.exp_name, config_source(cfg, names), None if resumed is None else resumed.origin
            )
            cfg.exp_name = run_dir.exp_name
            exp_dir = run_dir.path
            videos = video_dirs(cfg, exp_dir, video, collector_video)
            collector_env = evaluator_env = logger = None
            try:
                if not (exp_dir / CONFIG_FILE).exists():  # a continued run's is this config already
                    save_config(cfg, names, exp_dir / CONFIG_FILE)
                logger = ExperimentLogger(exp_dir)
                if run_dir.note is not None:
                    logger.info(run_dir.note)
                collector_env, evaluator_env = create_env_managers(without_env_recording(cfg))
                assert collector_env is not None and evaluator_env is not None
                seed_env_managers(seed, cfg, collector_env, evaluator_env)
                record_collector(collector_env, videos)
                learn_mode = prioritized_learn_mode(
                    policy.learn_mode, buffer
                )  # a prioritized buffer gets new priorities
                learner = BaseLearner(learn_mode, exp_dir / "ckpt", logger, settings["hook"])
                if settings["save_replay_buffer"]:
                    learner.add_resume_state(REPLAY_BUFFER_KEY, buffer.state_dict)
                collect_mode = policy.collect_mode
                if (
                    plan is not None and plan.kind == FRAME_STACK
                ):  # the buffer builds the samples from each env's transitions
                    collect_mode = transition_collect_mode(collect_mode)
                collector = self.collector_cls(collector_env, collect_mode)
                if resumed is not None:
                    learner.train_iter = resumed.counters["train_iter"]
                    collector.stats.env_step = resumed.counters["env_step"]
                    collector.stats.episode_count = resumed.counters["episodes"]
                learner.episode_count = collector.episode_count
                learner.best_eval_return = run_dir.best_return
                evaluator = InteractionSerialEvaluator(
                    evaluator_env,
                    policy.eval_mode,
                    cfg.env.n_evaluator_episode,
                    cfg.env.stop_value,
                    settings["eval_freq"],
                    video_dir=videos.evaluator,
                    best_return=run_dir.best_return,
                    fail_after_episode_steps=settings["fail_after_episode_steps"],
                    report=logger.info,
                )
                logger.info(
                    f"experiment {cfg.exp_name}: env {cfg.env.type} ({cfg.env.collector_env_num} collector, "
                    f"{cfg.env.evaluator_env_num} evaluator envs, {cfg.env.manager.type} manager), "
                    f"policy {cfg.policy.type}, "
                    f"seed {seed}, stop_value {cfg.env.stop_value}, max_env_step {max_env_step}, "
                    f"max_train_iter {max_train_iter}"
                )
                if plan is not None:
                    logger.info(plan.describe())
                if resumed is not None:
                    restored = resumed.counters.get("replay_buffer")
                    logger.info(
                        f"resumed from {load_path}: train iter {learner.train_iter}, env step {collector.env_step}, "
                        f"episodes {collector.episode_count}; replay buffer "
                        + ("refilled" if restored is None else f"of {restored} transitions restored")
                    )
                run = self.run_cls(
                    policy,
                    buffer,
                    learner,
                    collector,
                    evaluator,
                    logger,
                    settings,
                    max_train_iter,
                    max_env_step,
                    progress=ProgressLine(max_env_step=max_env_step, max_train_iter=max_train_iter)
                    if progress
                    else None,
                )
                return run.execute(exp_dir, seed, cfg.env.stop_value, started)
            finally:
                for env in (collector_env, evaluator_env):
                    if env is not None:
                        env.close()
                if logger is not None:
                    logger.close()
                run_dir.close()


def _replay_buffer(cfg: EasyDict, policy: Any, seed: int) -> tuple[ReplayBuffer, ReplayPlan | None]:
    """The run's replay buffer and its plan: from the env's spec and the policy, checked against the memory available
    (before any env runs). An on-policy run keeps one collection at a time in a naive buffer (no plan)."""
    if policy.cfg.get("on_policy"):
        return NaiveReplayBuffer(DEFAULT_SIZE, seed=seed), None
    trace = spec_trace_of(env_class(cfg.env), cfg.env)
    plan = plan_replay_buffer(policy.cfg, policy.nstep_rule, trace)
    available = mem_available()
    if available is not None:  # the kernel reports it (Linux)
        check_replay_memory(plan, int(cfg.env.collector_env_num) + int(cfg.env.evaluator_env_num), available)
    return build_replay_buffer(plan, trace[-1][1], policy.nstep_rule, seed), plan


@dataclasses.dataclass(frozen=True)
class _ResumeState:
    """A loaded checkpoint: where it came from and its counters (``train_iter``, ``env_step``, ``episodes``;
    ``replay_buffer``: the transitions restored)."""

    origin: Resumed
    counters: dict[str, int]


def _resume_state(
    policy: Any,
    load_path: str | os.PathLike[str],
    max_train_iter: int | None,
    max_env_step: int | None,
    buffer: ReplayBuffer | None = None,
) -> _ResumeState:
    """Load ``load_path`` into the policy (and ``buffer``, when it holds one) and return its counters."""
    state = load_checkpoint(load_path)
    counters = {
        "train_iter": checkpoint_counter(state, "last_iter", load_path),
        "env_step": checkpoint_counter(state, "last_step", load_path),
        "episodes": checkpoint_counter(state, "last_episode", load_path),
    }
    for limit, name, key in (
        (max_train_iter, "max_train_iter", "train_iter"),
        (max_env_step, "max_env_step", "env_step"),
    ):
        if limit is not None and counters[key] >= limit:
            raise ConfigError(
                f"{name} {limit} is not beyond the {key.replace('_', ' ')} {counters[key]} of checkpoint {load_path} "
                "(the limits count from the start of the first run)"
            )
    load_policy_state(policy.learn_mode, state, load_path)
    restored = None if buffer is None else load_replay_buffer(buffer, state, load_path)
    if restored is not None:
        counters["replay_buffer"] = restored
    origin = Resumed(pathlib.Path(load_path), counters["train_iter"], stored_best_return(state))
    return _ResumeState(origin, counters)


def _check_limit(value: Any, name: str) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ConfigError(f"{name} must be an int >= 1 or None, got {value!r}")


def _pipeline_settings(cfg: EasyDict) -> dict[str, Any]:
    """The policy-config values the pipeline itself uses (with DI-engine's defaults where a policy omits them)."""
    policy = cfg.policy
    learn = policy.get("learn") or {}
    evaluator = (policy.get("eval") or {}).get("evaluator") or {}
    hook = {**plain_defaults(LEARNER_HOOK), **((learn.get("learner") or {}).get("hook") or {})}
    return {
        "eval_freq": evaluator.get("eval_freq", plain_defaults(EVALUATOR)["eval_freq"]),
        "fail_after_episode_steps": configured_episode_bound(policy),
        "hook": hook,
        "save_ckpt_after_run": hook["save_ckpt_after_run"],
        "log_every": hook["log_show_after_iter"],
        "random_collect_size": int(policy.get("random_collect_size") or 0),
        "save_replay_buffer": save_in_checkpoint(policy),
    }


class SerialRun:
    """The training loop of one :data:`serial_pipeline` call: collect, learn from the replay buffer, evaluate."""

    def __init__(
        self,
        policy: Any,
        buffer: ReplayBuffer,
        learner: BaseLearner,
        collector: SampleSerialCollector,
        evaluator: InteractionSerialEvaluator,
        logger: ExperimentLogger,
        settings: dict[str, Any],
        max_train_iter: int | None,
        max_env_step: int | None,
        progress: ProgressLine | None = None,
    ) -> None:
        self.policy = policy
        self.buffer = buffer
        self.learner = learner
        self.collector = collector
        self.evaluator = evaluator
        self.logger = logger
        self.settings = settings
        self.max_train_iter = max_train_iter
        self.max_env_step = max_env_step
        self.progress = progress
        self.last_eval: EvalResult | None = None
        self.next_collector_log = learner.train_iter + settings["log_every"]
        logger.mark_collector(collector.env_step, collector.episode_count)

    def execute(self, exp_dir: pathlib.Path, seed: int, stop_value: float | None, started: float) -> SerialResult:
        interrupted = reached = False
        stop_signal: int | None = None
        try:
            try:
                reached = self.loop()
                if not reached and self.evaluator.last_eval_iter != self.learner.train_iter:
                    reached = self.evaluate()
            finally:
                self.sync_counters()
                if self.progress is not None:
                    self.show_progress(force=self.progress.drawn)
                    self.progress.close()
        except KeyboardInterrupt as err:
            interrupted, stop_signal = True, signal_of(err)
            name = "Ctrl-C" if stop_signal == signal.SIGINT else signal.Signals(stop_signal).name
            self.logger.info(f"interrupted ({name}): saving a checkpoint and closing the envs")
        except EnvManagerError as err:  # an env failed or an evaluation hit its bound: the policy's state is whole
            self.logger.info(
                f"the run failed at train iter {self.learner.train_iter}: {type(err).__name__}: {err}; "
                "saving a checkpoint and closing the envs"
            )
            self.learner.save_resume_checkpoint(self.collector.env_step)
            raise
        except Exception as err:
            self.logger.info(f"the run failed at train iter {self.learner.train_iter}: {type(err).__name__}: {err}")
            raise
        if interrupted or self.settings["save_ckpt_after_run"]:
            self.learner.save_resume_checkpoint(self.collector.env_step)
        result = SerialResult(
            exp_dir=exp_dir,
            seed=seed,
            stop_value=stop_value,
            stop_value_reached=reached,
            best_eval_return=self.evaluator.best_return,
            last_eval_return=None if self.last_eval is None else self.last_eval.mean,
            env_step=self.collector.env_step,
            train_iter=self.learner.train_iter,
            wall_time=time.monotonic() - started,
            interrupted=interrupted,
            stop_signal=stop_signal,
        )
        self.logger.info(result.summary(), echo=False)  # the caller reports the result itself
        return result

    def evaluate(self) -> bool:
        learner, collector = self.learner, self.collector

        def save_best(name: str) -> None:  # called after a better evaluation than any of the run's before
            learner.best_eval_return = self.evaluator.best_return
            learner.save_checkpoint(name, collector.env_step, replace=True)

        stop, result = self.evaluator.eval(save_best, learner.train_iter, collector.env_step)
        self.last_eval = result
        self.logger.eval_result(result)
        self.show_progress()
        return stop

    def sync_counters(self) -> None:
        """Let the learner's checkpoints record the collector's episode count."""
        self.learner.episode_count = self.collector.episode_count

    def show_progress(self, force: bool = False) -> None:
        """Update the status line on stderr (it limits how often it writes itself)."""
        if self.progress is not None:
            self.progress.update(
                env_step=self.collector.env_step,
                episodes=self.collector.episode_count,
                train_iter=self.learner.train_iter,
                eval_return=None if self.last_eval is None else self.last_eval.mean,
                force=force,
            )

    def limit_reached(self) -> bool:
        return (self.max_env_step is not None and self.collector.env_step >= self.max_env_step) or (
            self.max_train_iter is not None and self.learner.train_iter >= self.max_train_iter
        )

    def loop(self) -> bool:
        """Collect, learn and evaluate until a stop condition; True when ``stop_value`` was reached."""
        collect_mode = self.policy.collect_mode
        learner, collector, buffer = self.learner, self.collector, self.buffer
        batch_size = learner.batch_size
        updates = self.policy.learn_mode.update_per_collect
        warmup = self.settings["random_collect_size"]
        if collector.env_step < warmup:  # policy.random_collect_size: samples collected before any update
            kwargs = collect_mode.collect_kwargs(collector.env_step)
            buffer.push(collector.collect(n_sample=warmup - collector.env_step, policy_kwargs=kwargs))
            self.sync_counters()
        while True:
            if self.evaluator.should_eval(learner.train_iter) and self.evaluate():
                return True
            kwargs = collect_mode.collect_kwargs(collector.env_step)
            buffer.push(collector.collect(train_iter=learner.train_iter, policy_kwargs=kwargs))
            self.sync_counters()
            for _ in range(updates):
                batch = buffer.sample(batch_size)
                if batch is None:
                    break
                learner.train(batch, collector.env_step)
                if self.max_train_iter is not None and learner.train_iter >= self.max_train_iter:
                    break
            self.show_progress()
            if learner.train_iter >= self.next_collector_log:
                self.next_collector_log = learner.train_iter + self.settings["log_every"]
                self.log_collector(kwargs)
            if self.limit_reached():
                return False

    def log_collector(self, kwargs: dict[str, Any]) -> None:
        """The collector's line: ``episode_count`` (episodes since the first run's start), ``buffer_size``, the
        exploration values, and of the episodes finished since the last line their number (``episodes_finished``),
        mean return (``episode_return_mean``) and mean length in env steps (``episode_length_mean``)."""
        returns = self.collector.pop_returns()
        lengths = self.collector.pop_lengths()
        values: dict[str, float] = {
            "episode_count": self.collector.episode_count,
            "buffer_size": len(self.buffer),
            **{key: float(value) for key, value in kwargs.items() if isinstance(value, (int, float))},
            "episodes_finished": len(lengths),
        }
        if returns:
            values["episode_return_mean"] = sum(returns) / len(returns)
        if lengths:
            values["episode_length_mean"] = sum(lengths) / len(lengths)
        self.logger.collector_scalars(self.collector.env_step, self.collector.episode_count, values)


serial_pipeline = SerialPipeline("serial", SerialRun, SampleSerialCollector)
"""Train an off-policy policy (DQN, SAC, ...) and evaluate it as the config says (see the module and
:meth:`SerialPipeline.__call__`); return a :class:`SerialResult`."""
