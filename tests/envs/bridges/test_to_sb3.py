"""stable-baselines3 on ding: ``SB3VecEnv`` over every process kind of manager, checked against SB3's own
``DummyVecEnv`` step for step, and ``GymnasiumEnv`` through SB3's env checker; PPO learns CartPole through it."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from ding.envs import DingEnvWrapper
from ding.envs.bridges.to_gymnasium import GymnasiumEnv
from ding.envs.env_manager import BaseEnvManager, create_env_manager

sb3 = pytest.importorskip("stable_baselines3")
from stable_baselines3.common.env_checker import check_env  # noqa: E402
from stable_baselines3.common.monitor import Monitor  # noqa: E402
from stable_baselines3.common.vec_env import DummyVecEnv, VecMonitor  # noqa: E402

from ding.envs.bridges.to_sb3 import SB3VecEnv, make_sb3_vec_env  # noqa: E402

KINDS = {
    "base": {"type": "base"},
    "subprocess": {"type": "subprocess"},
    "subprocess-2-per-worker": {"type": "subprocess", "envs_per_worker": 2},
    "in-caller": {"type": "subprocess", "envs_per_worker": 2, "step_in_caller": True},
    "async_subprocess": {"type": "async_subprocess"},
    "zmq": {"type": "zmq"},
    "ray": {"type": "ray"},
}
"""Manager kinds the VecEnv is checked on (Ray's actors take a second each to start: ``ray`` runs with ``-m slow``)."""
KIND_PARAMS = [pytest.param(kind, marks=[pytest.mark.slow] if kind == "ray" else []) for kind in KINDS]


@pytest.fixture
def manager_cfg(request: pytest.FixtureRequest) -> Iterator[dict[str, Any]]:
    """The config of a manager kind; a local Ray runs while a ``ray`` kind is tested."""
    cfg = KINDS[request.param]
    if cfg["type"] != "ray":
        yield cfg
        return
    ray = pytest.importorskip("ray")
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield cfg
    if started:
        ray.shutdown()


def cartpole(max_episode_steps: int | None = None, **cfg: Any) -> functools.partial[DingEnvWrapper]:
    kwargs = {} if max_episode_steps is None else {"max_episode_steps": max_episode_steps}
    return functools.partial(DingEnvWrapper, cfg={"env_id": "CartPole-v1", "env_kwargs": kwargs, **cfg})


def action_rows(schedule: str, steps: int, num_envs: int) -> list[np.ndarray]:
    if schedule == "alternate":  # balances the pole: episodes end at the time limit (truncated)
        return [np.full(num_envs, t % 2, np.int64) for t in range(steps)]
    return [np.zeros(num_envs, np.int64) for _ in range(steps)]  # pushes one way: the pole falls (terminated)


@pytest.mark.parametrize("manager_cfg", KIND_PARAMS, indirect=True)
@pytest.mark.parametrize(("schedule", "limit"), [("alternate", 8), ("push_left", 40)])
def test_steps_match_sb3_dummy_vec_env_until_each_first_episode_end(
    manager_cfg: dict[str, Any], schedule: str, limit: int
) -> None:
    """Same seeds, same actions: observations, rewards, dones and SB3's infos equal DummyVecEnv's over gymnasium."""
    num_envs = 3
    reference = DummyVecEnv([lambda: gym.make("CartPole-v1", max_episode_steps=limit)] * num_envs)
    reference.seed(10)
    manager = create_env_manager(manager_cfg, [cartpole(limit)] * num_envs)
    manager.seed([10 + i for i in range(num_envs)], dynamic_seed=False)  # reset i with seed 10 + i, as SB3 does
    with SB3VecEnv(manager) as venv:
        expected, got = reference.reset(), venv.reset()
        assert got.dtype == expected.dtype == np.float32 and np.array_equal(got, expected)
        ended: dict[int, bool] = {}  # env -> whether its first episode ended truncated
        for actions in action_rows(schedule, limit + 1, num_envs):
            ref_obs, ref_rew, ref_done, ref_infos = reference.step(actions)
            obs, rew, done, infos = venv.step(actions)
            assert rew.dtype == ref_rew.dtype == np.float32 and done.dtype == ref_done.dtype == bool
            for i in (i for i in range(num_envs) if i not in ended):
                assert rew[i] == ref_rew[i] and done[i] == ref_done[i]
                assert infos[i]["TimeLimit.truncated"] == ref_infos[i]["TimeLimit.truncated"]
                if done[i]:
                    assert np.array_equal(infos[i]["terminal_observation"], ref_infos[i]["terminal_observation"])
                    ended[i] = infos[i]["TimeLimit.truncated"]
                else:
                    assert np.array_equal(obs[i], ref_obs[i]) and "terminal_observation" not in infos[i]
        assert ended == dict.fromkeys(range(num_envs), schedule == "alternate")


def test_observations_stay_valid_across_the_next_step() -> None:
    """A subprocess manager hands out shared-memory views; SB3 keeps each batch across the next step."""
    with make_sb3_vec_env({"type": "subprocess", "shared_memory": True}, [cartpole()] * 2) as venv:
        venv.seed(0)
        first = venv.reset()
        kept = first.copy()
        second, *_ = venv.step(np.array([0, 1]))
        assert np.array_equal(first, kept) and not np.shares_memory(first, second)


def test_seed_replays_the_same_episodes_and_every_env_draws_its_own() -> None:
    def run(seed: int) -> list[np.ndarray]:
        with make_sb3_vec_env({"type": "base"}, [cartpole(5)] * 2) as venv:
            assert venv.seed(seed) == [seed, seed + 1]
            out = [venv.reset()]
            for t in range(12):
                out.append(venv.step(np.full(2, t % 2))[0])
            return out

    first = run(3)
    assert all(np.array_equal(a, b) for a, b in zip(first, run(3), strict=True))
    assert not np.array_equal(first[0], run(4)[0])
    starts = {first[t][i].tobytes() for t in (0, 5, 10) for i in range(2)}  # three episodes of two envs
    assert len(starts) == 6


def test_attributes_methods_and_wrappers_reach_envs_in_their_processes() -> None:
    with make_sb3_vec_env({"type": "subprocess"}, [cartpole(), cartpole()]) as venv:
        venv.seed(7)
        venv.reset()
        assert venv.get_attr("_seed") == [7, 8] and venv.get_attr("render_mode", indices=1) == [None]
        venv.set_attr("tag", "second", indices=[1])
        assert venv.get_attr("tag", indices=[1]) == ["second"]
        with pytest.raises(AttributeError, match=r"env 0 \(subprocess manager\) has no attribute 'tag'"):
            venv.get_attr("tag")
        assert venv.has_attr("_seed") and not venv.has_attr("tag")
        assert [int(np.asarray(a).item()) in (0, 1) for a in venv.env_method("random_action")] == [True, True]
        sample = venv.get_attr("random_action", indices=0)[0]
        assert sample.__name__ == "random_action" and np.asarray(sample()).shape == (1,)
        assert venv.env_is_wrapped(gym.wrappers.TimeLimit) == [True, True]
        assert venv.env_is_wrapped(Monitor, indices=0) == [False]
        with pytest.raises(IndexError, match=r"env indices \[2\] out of range for 2 envs"):
            venv.env_method("render", indices=[2])


def test_render_tiles_the_envs_images() -> None:
    with make_sb3_vec_env({"type": "base"}, [cartpole(env_kwargs={"render_mode": "rgb_array"})] * 2) as venv:
        assert venv.render_mode == "rgb_array"
        venv.reset()
        images = venv.get_images()
        assert [image.shape for image in images] == [(400, 600, 3)] * 2
        assert venv.render().shape == (800, 600, 3)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "manager_cfg", [{"auto_reset": False}, {"episode_num": 1}], ids=["no_auto_reset", "one_episode"]
)
def test_episodes_go_on_when_the_manager_leaves_an_env_waiting(manager_cfg: dict[str, Any]) -> None:
    with make_sb3_vec_env({"type": "base", **manager_cfg}, [cartpole(3)] * 2) as venv:
        venv.seed(0)
        venv.reset()
        dones = [venv.step(np.full(2, t % 2))[2] for t in range(9)]
        assert [bool(d.all()) for d in dones] == [False, False, True] * 3


def test_uint8_frames_keep_their_dtype() -> None:
    pytest.importorskip("ale_py")
    from dizoo.atari.envs import AtariEnv

    env_fn = functools.partial(AtariEnv, cfg={"env_id": "PongNoFrameskip-v4"})
    with make_sb3_vec_env({"type": "subprocess"}, [env_fn] * 2) as venv:
        obs = venv.reset()
        assert obs.dtype == np.uint8 and obs.shape == (2, 4, 84, 84) and venv.observation_space.dtype == np.uint8
        obs, rewards, *_ = venv.step(np.array([0, 1]))
        assert obs.dtype == np.uint8 and rewards.dtype == np.float32


def test_sb3_refuses_what_it_cannot_drive() -> None:
    with pytest.raises(TypeError, match="SB3VecEnv takes a ding env manager, got DummyVecEnv"):
        SB3VecEnv(DummyVecEnv([lambda: gym.make("CartPole-v1")]))  # type: ignore[arg-type]
    dict_actions = BaseEnvManager([lambda: DingEnvWrapper(DictActionEnv(), cfg={"env_wrapper": None})])
    with pytest.raises(TypeError, match=r"needs an action space SB3 acts in \(Box, Discrete, .*\), got Dict"):
        SB3VecEnv(dict_actions)
    with make_sb3_vec_env({"type": "base"}, [cartpole()] * 2) as venv:
        venv.reset()
        with pytest.raises(ValueError, match=r"actions must have shape \(2,\) .*, got \(3,\)"):
            venv.step_async(np.zeros(3, np.int64))


class DictActionEnv(gym.Env[np.ndarray, dict[str, Any]]):
    """A gymnasium env whose actions are a Dict, which no SB3 algorithm acts in."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    action_space = gym.spaces.Dict({"move": gym.spaces.Discrete(2), "force": gym.spaces.Box(0.0, 1.0, (1,))})

    def reset(self, *, seed: int | None = None, options: Any = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        return np.zeros(2, np.float32), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        return np.zeros(2, np.float32), 0.0, False, False, {}


def test_single_env_through_sb3s_checker_and_ppo() -> None:
    for env in (DingEnvWrapper(cfg={"env_id": "CartPole-v1"}), DingEnvWrapper(cfg={"env_id": "Pendulum-v1"})):
        check_env(GymnasiumEnv(env), warn=False)
    single = GymnasiumEnv(DingEnvWrapper(cfg={"env_id": "CartPole-v1"}))
    first, _ = single.reset(seed=5)
    assert np.array_equal(single.reset(seed=5)[0], first) and not np.array_equal(single.reset()[0], first)
    model = sb3.PPO("MlpPolicy", single, n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu")
    model.learn(64)
    assert model.num_timesteps == 64
    with SB3VecEnv(BaseEnvManager([cartpole()])) as venv:  # or one env in a manager
        model = sb3.PPO("MlpPolicy", VecMonitor(venv), n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu")
        model.learn(64)
        assert model.num_timesteps == 64


def test_gymnasium_env_refusals() -> None:
    with pytest.raises(TypeError, match="GymnasiumEnv takes a ding env \\(a BaseEnv\\), got TimeLimit"):
        GymnasiumEnv(gym.make("CartPole-v1"))  # type: ignore[arg-type]
    env = GymnasiumEnv(DingEnvWrapper(cfg={"env_id": "CartPole-v1"}))
    with pytest.raises(ValueError, match=r"DingEnvWrapper.reset takes no options .*got \{'x': 1\}"):
        env.reset(options={"x": 1})


@pytest.mark.slow
def test_ppo_on_8_subprocess_cartpoles_reaches_475() -> None:
    """SB3's PPO (rl-zoo's CartPole settings) through the adapter: an evaluation return of 475 within 150k steps."""
    import torch
    from stable_baselines3.common.callbacks import EvalCallback, StopTrainingOnRewardThreshold

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    venv = VecMonitor(make_sb3_vec_env({"type": "subprocess"}, [cartpole()] * 8))
    evaluator = functools.partial(DingEnvWrapper, cfg={"env_id": "CartPole-v1"}, caller="evaluator")
    eval_env = VecMonitor(make_sb3_vec_env({"type": "base"}, [evaluator] * 2))
    try:
        model = sb3.PPO(
            "MlpPolicy",
            venv,
            n_steps=32,
            batch_size=256,
            gae_lambda=0.8,
            gamma=0.98,
            n_epochs=20,
            ent_coef=0.0,
            learning_rate=lambda left: 1e-3 * left,
            clip_range=lambda left: 0.2 * left,
            seed=0,
            device="cpu",
        )
        stop = StopTrainingOnRewardThreshold(reward_threshold=475)
        evaluation = EvalCallback(eval_env, callback_on_new_best=stop, eval_freq=5_000 // 8, n_eval_episodes=10)
        model.learn(150_000, callback=evaluation)
        best = evaluation.best_mean_reward
        assert best >= 475, f"best evaluation return {best} after {model.num_timesteps} steps"
    finally:
        venv.close()
        eval_env.close()
        torch.set_num_threads(threads)


def test_box_actions_and_sb3s_off_policy_algorithms() -> None:
    """SAC acts in Box actions and stores terminal observations in its replay buffer at once."""
    pendulum = functools.partial(DingEnvWrapper, cfg={"env_id": "Pendulum-v1", "env_kwargs": {"max_episode_steps": 20}})
    with make_sb3_vec_env({"type": "subprocess"}, [pendulum] * 2) as venv:
        assert venv.action_space.shape == (1,)
        model = sb3.SAC("MlpPolicy", VecMonitor(venv), learning_starts=10, batch_size=8, seed=0, device="cpu")
        model.learn(50)
        assert model.num_timesteps == 50 and model.replay_buffer.size() == 25
        assert [int(info["l"]) for info in model.ep_info_buffer] == [20, 20]  # one episode per env


class FailsOnceEnv(gym.Env[np.ndarray, np.int64]):
    """Counts its steps in the observation and raises at its third step, once (deterministic fault injection)."""

    observation_space = gym.spaces.Box(0.0, 100.0, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)
    failed = False

    def reset(self, *, seed: int | None = None, options: Any = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(1, np.float32), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        self.t += 1
        if self.t == 3 and not FailsOnceEnv.failed:
            FailsOnceEnv.failed = True
            raise RuntimeError("injected fault")
        return np.full(1, self.t, np.float32), 1.0, False, False, {}


@pytest.fixture
def fails_once_id() -> Iterator[str]:
    env_id = "DingTestFailsOnce-v0"
    gym.register(id=env_id, entry_point=FailsOnceEnv)
    FailsOnceEnv.failed = False
    yield env_id
    del gym.registry[env_id]


def test_an_env_fault_ends_its_episode_as_a_truncation(fails_once_id: str) -> None:
    env_fn = functools.partial(DingEnvWrapper, cfg={"env_id": fails_once_id, "env_wrapper": None})
    with SB3VecEnv(BaseEnvManager([env_fn] * 2, {"max_retry": 2})) as venv:
        venv.reset()
        steps = [venv.step(np.zeros(2, np.int64)) for _ in range(4)]
        obs, rewards, dones, infos = steps[2]
        assert dones.tolist() == [True, False] and rewards.tolist() == [0.0, 1.0]
        assert infos[0]["abnormal"] and "injected fault" in infos[0]["error"] and infos[0]["TimeLimit.truncated"]
        assert infos[0]["terminal_observation"].tolist() == [2.0]  # the last observation before the fault
        assert obs[:, 0].tolist() == [0.0, 3.0] and steps[3][0][:, 0].tolist() == [1.0, 4.0]  # env 0 started over


class EchoEnv(gym.Env[np.ndarray, np.ndarray]):
    """A gymnasium env whose observation is the last action (a Box of 4) and which keeps its reset options."""

    observation_space = gym.spaces.Box(-10.0, 10.0, (4,), np.float32)
    action_space = gym.spaces.Box(-10.0, 10.0, (4,), np.float32)

    def __init__(self) -> None:
        self.counter = 0
        self.last_options: Any = None

    def reset(self, *, seed: int | None = None, options: Any = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self.last_options = options
        return np.zeros(4, np.float32), {}

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        return np.asarray(action, np.float32), 0.0, False, False, {}


def echo_fn() -> Any:
    from ding.envs.env_manager.vector import gymnasium_env_fn

    return gymnasium_env_fn(EchoEnv)


def test_actions_of_as_many_values_in_another_shape_are_reshaped_as_sb3_does() -> None:
    with make_sb3_vec_env({"type": "base"}, [echo_fn()]) as venv:
        venv.reset()
        obs, *_ = venv.step(np.arange(4, dtype=np.float32).reshape(2, 2))  # one env, a Box of 4: reshaped to (1, 4)
        assert obs.tolist() == [[0.0, 1.0, 2.0, 3.0]]
        with pytest.raises(ValueError, match=r"actions must have shape \(1, 4\) .*, got \(2, 3\)"):
            venv.step_async(np.zeros((2, 3), np.float32))


@pytest.mark.parametrize("kind", ["base", "subprocess"])
def test_set_wrapper_attr_and_options_reach_the_gymnasium_envs_as_in_sb3(kind: str) -> None:
    with make_sb3_vec_env({"type": kind}, [echo_fn()] * 3) as venv:
        venv.reset()
        assert venv.env_method("set_wrapper_attr", "counter", 12, indices=[0, -1]) == [True, True]  # SB3's return
        assert venv.get_attr("counter") == [12, 0, 12] and venv.get_attr("counter", indices=-1) == [12]
        venv.set_options([{"level": 1}, {}, {"level": 3}])
        venv.reset()
        assert venv.get_attr("last_options") == [{"level": 1}, None, {"level": 3}]
        venv.reset()
        assert venv.get_attr("last_options") == [None] * 3  # options apply to one reset, as in SB3
        with pytest.raises(IndexError, match=r"env indices \[3, -4\] out of range for 3 envs"):
            venv.get_attr("counter", indices=[3, -4])


def test_envs_are_the_ding_envs_where_they_run_in_process() -> None:
    with make_sb3_vec_env({"type": "base"}, [echo_fn()] * 2) as venv:
        venv.set_attr("dummy", 7)
        assert [type(env).__name__ for env in venv.envs] == ["GymnasiumPassthroughEnv"] * 2
        assert venv.envs[1].dummy == 7
    with (
        make_sb3_vec_env({"type": "subprocess"}, [echo_fn()] * 2) as venv,
        pytest.raises(AttributeError, match="the subprocess manager's envs run in its workers"),
    ):
        _ = venv.envs


def test_env_functions_that_return_one_shared_env_are_refused() -> None:
    from ding.envs.env_manager.vector import gymnasium_env_fn

    shared = EchoEnv()
    with pytest.raises(ValueError, match="envs 0 and 1 are one env instance: each env function must make a new env"):
        make_sb3_vec_env({"type": "base"}, [gymnasium_env_fn(lambda: shared)] * 3)
    one_ding_env = DingEnvWrapper(cfg={"env_id": "CartPole-v1"})
    with pytest.raises(ValueError, match="envs 0 and 1 are one env instance"):
        make_sb3_vec_env({"type": "base"}, [lambda: one_ding_env] * 2)
