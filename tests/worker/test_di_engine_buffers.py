"""DI-engine's replay buffers (``NaiveReplayBuffer``, ``AdvancedReplayBuffer``) at DI-engine's import paths: their
``default_config()``, DI-engine's calls over ding's buffers, and each DI-engine key honoured, refused or dropped."""

from __future__ import annotations

import logging
import math
from typing import Any

import pytest

from ding.errors import ConfigError, UnknownConfigKeyError
from ding.worker import AdvancedReplayBuffer, NaiveReplayBuffer
from ding.worker.prioritized_buffer import PrioritizedReplayBuffer
from ding.worker.priority import PRIORITY_EPS

DI_ENGINE_ADVANCED = {
    "type": "advanced",
    "replay_buffer_size": 4096,
    "max_use": math.inf,
    "max_staleness": math.inf,
    "alpha": 0.6,
    "beta": 0.4,
    "anneal_step": 100000,
    "enable_track_used_data": False,
    "deepcopy": False,
    "thruput_controller": {"push_sample_rate_limit": {"max": math.inf, "min": 0}, "sample_min_limit_ratio": 1},
}
"""DI-engine 0.5.3's ``AdvancedReplayBuffer.default_config()`` without the keys of its logs (``monitor``,
``thruput_controller.window_seconds``), which ding drops."""


def test_di_engines_import_paths() -> None:
    from ding.worker.replay_buffer import AdvancedReplayBuffer as from_package
    from ding.worker.replay_buffer.advanced_buffer import AdvancedReplayBuffer as from_module
    from ding.worker.replay_buffer.naive_buffer import NaiveReplayBuffer as naive_from_module

    assert from_package is from_module is AdvancedReplayBuffer and naive_from_module is NaiveReplayBuffer


def test_default_configs_are_di_engines_with_the_values_ding_has() -> None:
    assert NaiveReplayBuffer.default_config() == {
        "type": "naive",
        "replay_buffer_size": 10000,
        "deepcopy": False,
        "enable_track_used_data": False,
    }
    assert AdvancedReplayBuffer.default_config() == DI_ENGINE_ADVANCED
    assert NaiveReplayBuffer.default_config().replay_buffer_size == 10000  # an EasyDict, as DI-engine's


def test_a_di_engine_loop_over_the_advanced_buffer_draws_by_priority_and_takes_updates() -> None:
    cfg = AdvancedReplayBuffer.default_config()
    cfg.replay_buffer_size, cfg.alpha, cfg.beta = 16, 1.0, 1.0
    buffer = AdvancedReplayBuffer(cfg, tb_logger=None, exp_name="cartpole", instance_name="replay")
    buffer.start()
    assert isinstance(buffer, PrioritizedReplayBuffer) and buffer.replay_buffer_size == 16
    buffer.push([{"obs": i} for i in range(8)], cur_collector_envstep=8)
    assert buffer.count() == 8 and buffer.sample(9, cur_learner_iter=0) is None
    batch = buffer.sample(4, cur_learner_iter=0)
    assert batch is not None
    info = {
        "replay_buffer_idx": [sample["replay_buffer_idx"] for sample in batch],
        "replay_unique_id": [sample["replay_unique_id"] for sample in batch],
        "priority": [0.0] * len(batch),
    }
    buffer.update(info)
    assert buffer.priorities(info["replay_buffer_idx"]).tolist() == [PRIORITY_EPS] * len(batch)
    drawn = {sample["obs"] for _ in range(50) for sample in buffer.sample(4, cur_learner_iter=1) or []}
    assert drawn.isdisjoint(sample["obs"] for sample in batch)  # priority ~0: practically never drawn again
    buffer.close()


def test_the_naive_buffer_takes_di_engines_config_and_calls_and_dings_own_form() -> None:
    buffer = NaiveReplayBuffer({"replay_buffer_size": 3}, instance_name="replay")
    buffer.push({"x": 0}, cur_collector_envstep=1)
    buffer.push([{"x": 1}, {"x": 2}, {"x": 3}], cur_collector_envstep=4)
    assert buffer.count() == 3 and sorted(s["x"] for s in buffer.sample(3, 0) or []) == [1, 2, 3]
    buffer.update({"priority": [1.0]})  # nothing to update, as in DI-engine
    own = NaiveReplayBuffer(3, seed=0)
    assert own.capacity == 3 and own.cfg.replay_buffer_size == 3
    with pytest.raises(ValueError, match=r"sample\(sample_range=None, replace=True\) is not supported"):
        buffer.sample(2, 0, replace=True)


@pytest.mark.parametrize(
    ("cfg", "error", "match"),
    [
        (
            {"max_use": 4},
            ConfigError,
            r"buffer\.max_use must be inf \(ding's buffer does not limit how often a sample is used",
        ),
        ({"deepcopy": True}, ConfigError, r"buffer\.deepcopy must be False \(ding stores the objects pushed"),
        ({"enable_track_used_data": True}, ConfigError, r"enable_track_used_data must be False"),
        ({"alpha": 1.5}, ConfigError, r"buffer\.alpha must be a number in \[0, 1\]"),
        (
            {"thruput_controller": {"push_sample_rate_limit": {"max": 100}}},
            ConfigError,
            r"thruput_controller\.push_sample_rate_limit\.max must be inf",
        ),
        ({"type": "naive"}, ConfigError, r"buffer\.type must be 'advanced'"),
        ({"replay_buffer_sze": 10}, UnknownConfigKeyError, r"Did you mean 'replay_buffer_size'\?"),
    ],
)
def test_di_engine_keys_ding_does_not_have_are_refused_with_the_reason(
    cfg: dict[str, Any], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        AdvancedReplayBuffer(cfg)


def test_the_keys_of_di_engines_buffer_logs_are_dropped_with_one_line(caplog: pytest.LogCaptureFixture) -> None:
    cfg = {
        "replay_buffer_size": 16,
        "monitor": {"sampled_data_attr": {"average_range": 5, "print_freq": 200}},
        "thruput_controller": {"window_seconds": 30, "sample_min_limit_ratio": 1},
    }
    with caplog.at_level(logging.WARNING, logger="ding.config"):
        buffer = AdvancedReplayBuffer(cfg)
    assert buffer.capacity == 16 and "monitor" not in buffer.cfg
    assert "window_seconds" not in buffer.cfg.thruput_controller
    lines = [record.getMessage() for record in caplog.records]
    assert (
        len(lines) == 1 and "buffer.monitor=" in lines[0] and "buffer.thruput_controller.window_seconds=30" in lines[0]
    )
