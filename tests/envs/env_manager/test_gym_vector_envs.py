"""ManagerVectorEnv reaching its envs: call / get_attr / set_attr, rendering, metadata, spaces and dtypes."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.vector.utils import batch_differing_spaces, batch_space

from ding.envs.env_manager import BaseEnvManager
from ding.envs.env_manager.vector import (
    GymnasiumPassthroughEnv,
    ManagerVectorEnv,
    gymnasium_env_fn,
    make_vector_env,
    tile_images,
    vector_env_fn,
)
from ding.envs.values.spaces import EnvSpaces
from ding.errors import BatchSpecError, EnvManagerError, EnvSpecError
from dizoo.classic_control.cartpole.envs import CartPoleEnv

KINDS: dict[str, dict[str, Any]] = {
    "base": {"type": "base"},
    "subprocess": {"type": "subprocess", "envs_per_worker": 2},
}


def cartpole(**kwargs: Any) -> Callable[[], Any]:
    return gymnasium_env_fn(partial(gym.make, "CartPole-v1", **kwargs))


# ----- call, get_attr, set_attr --------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", list(KINDS))
def test_attributes_reach_the_gymnasium_envs(kind: str) -> None:
    with make_vector_env(KINDS[kind], [cartpole() for _ in range(3)]) as envs:
        assert envs.get_attr("gravity") == (9.8, 9.8, 9.8)
        envs.set_attr("gravity", [1.0, 2.0, 3.0])
        assert envs.call("gravity") == (1.0, 2.0, 3.0)
        envs.set_attr("force_mag", 5.0)  # one value for every env
        envs.reset(seed=0)
        obs, *_ = envs.step(np.array([1, 1, 1]))
        for i, gravity in enumerate((1.0, 2.0, 3.0)):  # the simulators step with the values set
            reference = gym.make("CartPole-v1")
            reference.unwrapped.gravity, reference.unwrapped.force_mag = gravity, 5.0  # type: ignore[attr-defined]
            reference.reset(seed=i)
            np.testing.assert_array_equal(obs[i], reference.step(1)[0])
        assert envs.get_attr("spec")[0].id == "CartPole-v1"
        with pytest.raises(AttributeError, match=r"envs \[0, 1, 2\] have no attribute 'no_such_thing'"):
            envs.get_attr("no_such_thing")


def test_call_runs_methods_with_arguments_and_refuses_episode_methods() -> None:
    with make_vector_env({"type": "subprocess"}, [cartpole() for _ in range(2)]) as envs:
        assert envs.call("get_wrapper_attr", "gravity") == (9.8, 9.8)
        assert envs.call("reset_info") == ({}, {})
        for name in ("reset", "step", "close"):
            with pytest.raises(ValueError, match=rf"call\('{name}'\) would {name} envs behind the vector env's back"):
                envs.call(name)
        with pytest.raises(ValueError, match=r"one value per env \(2\) or a single value, got 3"):
            envs.set_attr("gravity", [1.0, 2.0, 3.0])


def test_ding_envs_answer_for_themselves() -> None:
    """DI-engine-style envs: their own attributes, and set_attr sets them on the ding env."""
    with make_vector_env(KINDS["subprocess"], [partial(CartPoleEnv, cfg={}) for _ in range(2)]) as envs:
        assert [space.n for space in envs.get_attr("action_space")] == [2, 2]
        envs.set_attr("marker", ["a", "b"])
        assert envs.get_attr("marker") == ("a", "b")
        with pytest.raises(AttributeError, match="have no attribute 'gravity'"):
            envs.get_attr("gravity")  # ding's DingEnvWrapper does not reach into its gymnasium env
        assert envs.render_mode is None
        assert envs.metadata == {"autoreset_mode": gym.vector.AutoresetMode.NEXT_STEP}


# ----- built as SyncVectorEnv is --------------------------------------------------------------------------------
@pytest.mark.parametrize("manager_cfg", [None, {"type": "subprocess", "envs_per_worker": 2}], ids=["default", "sub"])
def test_constructed_from_env_functions_as_sync_vector_env(manager_cfg: dict[str, Any] | None) -> None:
    fns = [lambda: gym.make("CartPole-v1") for _ in range(3)]
    theirs = gym.vector.SyncVectorEnv(fns, True, "same", gym.vector.AutoresetMode.SAME_STEP)
    with ManagerVectorEnv(fns, True, "same", gym.vector.AutoresetMode.SAME_STEP, manager_cfg=manager_cfg) as ours:
        assert ours.manager.manager_type == ("base" if manager_cfg is None else "subprocess")
        assert ours.get_attr("gravity") == (9.8, 9.8, 9.8)  # gymnasium envs, kept as they are
        np.testing.assert_array_equal(ours.reset(seed=5)[0], theirs.reset(seed=5)[0])
        for row in np.random.default_rng(0).integers(0, 2, size=(40, 3)):
            np.testing.assert_array_equal(ours.step(row)[0], theirs.step(row)[0])
    theirs.close()


def test_env_functions_may_make_ding_envs() -> None:
    ding_fns = [partial(CartPoleEnv, cfg={}), lambda: CartPoleEnv(cfg={})]
    assert vector_env_fn(ding_fns[0]) is ding_fns[0]  # its declared spaces stay visible to the manager
    with ManagerVectorEnv(ding_fns, autoreset_mode="SameStep") as envs:
        assert envs.reset(seed=0)[0].shape == (2, 4)
        infos: dict[str, Any] = {}
        while "final_info" not in infos:
            infos = envs.step(np.array([0, 0]))[-1]
        assert "eval_episode_return" in infos["final_info"]  # ding's CartPoleEnv, not a gymnasium passthrough
    with pytest.raises(TypeError, match="made 3: neither a ding env nor a gymnasium env"):
        ManagerVectorEnv([lambda: 3])


def test_bad_constructor_arguments_are_named() -> None:
    with pytest.raises(TypeError, match=r"non-empty list of functions that make envs .*got \[\]"):
        ManagerVectorEnv([])
    with pytest.raises(TypeError, match="a vector env takes functions that make envs, got 'CartPole-v1'"):
        ManagerVectorEnv(["CartPole-v1"])  # type: ignore[list-item]
    manager = BaseEnvManager([partial(CartPoleEnv, cfg={})])
    with pytest.raises(TypeError, match="manager_cfg with env constructors only"):
        ManagerVectorEnv(manager, manager_cfg={"type": "base"})
    with pytest.raises(TypeError, match="ManagerVectorEnv needs a manager that steps every env"):
        ManagerVectorEnv([cartpole()], manager_cfg={"type": "async_subprocess"})


# ----- envs: one view per env ---------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", list(KINDS))
def test_envs_views_read_set_and_call_each_env(kind: str) -> None:
    with make_vector_env(KINDS[kind], [cartpole() for _ in range(3)], autoreset_mode="SameStep") as envs:
        views = envs.envs
        assert len(views) == 3 and repr(views[2]) == "EnvView(env 2)"
        assert "autoreset_mode" not in views[0].metadata  # the vector env's metadata is its own
        views[1].gravity = 2.5
        assert envs.get_attr("gravity") == (9.8, 2.5, 9.8)
        assert views[1].get_wrapper_attr("gravity") == 2.5  # a method, called in env 1 only
        assert views[0].spec.id == "CartPole-v1"
        with pytest.raises(AttributeError, match="env 2 has no attribute 'no_such_thing'"):
            views[2].no_such_thing  # noqa: B018
        for name in ("reset", "step", "close"):
            with pytest.raises(ValueError, match=rf"call\('{name}'\) would {name} envs behind"):
                getattr(views[0], name)
    with pytest.raises(EnvManagerError, match="ManagerVectorEnv is closed"):
        envs.envs  # noqa: B018


@pytest.mark.parametrize("kind", list(KINDS))
def test_envs_views_read_a_wrapper_state_as_sync_vector_env_does(kind: str) -> None:
    """gymnasium's own check: one env wrapped in NormalizeReward equals the vector NormalizeReward, read via envs[0]."""

    def normalized() -> gym.Env[Any, Any]:
        return gym.wrappers.NormalizeReward(gym.make("CartPole-v1"))

    per_env = make_vector_env(KINDS[kind], [gymnasium_env_fn(normalized)])
    vec_env = gym.wrappers.vector.NormalizeReward(make_vector_env(KINDS[kind], [cartpole()]))
    for envs in (per_env, vec_env):
        envs.reset(seed=42)
        envs.action_space.seed(0)
        for _ in range(50):
            envs.step(envs.action_space.sample())
    rms = per_env.envs[0].return_rms
    assert rms.count == vec_env.return_rms.count > 40
    np.testing.assert_allclose(rms.mean, vec_env.return_rms.mean, rtol=1e-4)
    np.testing.assert_allclose(rms.var, vec_env.return_rms.var, rtol=1e-4)
    per_env.close()
    vec_env.close()


def test_unequal_observation_spaces_raise_sync_vector_envs_words() -> None:
    """The error opens with SyncVectorEnv's sentence; observation spaces are checked before action spaces."""
    sentence = "SyncVectorEnv(..., observation_mode='same') however the sub-environments observation spaces are not"
    fns = [cartpole(), gymnasium_env_fn(partial(gym.make, "FrozenLake-v1")), cartpole()]
    for cfg in KINDS.values():
        with pytest.raises(BatchSpecError, match=re.escape(sentence) + r".*env 1 .*Discrete\(16\)"):
            make_vector_env(cfg, fns)


# ----- rendering and metadata ----------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", list(KINDS))
def test_render_returns_each_env_frame(kind: str) -> None:
    with make_vector_env(KINDS[kind], [cartpole(render_mode="rgb_array") for _ in range(3)]) as envs:
        assert envs.render_mode == "rgb_array"
        assert envs.metadata["render_fps"] == 50 and "rgb_array" in envs.metadata["render_modes"]
        envs.reset(seed=0)
        frames = envs.render()
        assert isinstance(frames, tuple) and len(frames) == 3
        assert all(frame.shape == (400, 600, 3) and frame.dtype == np.uint8 for frame in frames)
        reference = gym.make("CartPole-v1", render_mode="rgb_array")
        reference.reset(seed=1)
        np.testing.assert_array_equal(frames[1], reference.render())  # env 1 was seeded 0 + 1
        reference.close()


def test_tiled_render_is_one_image() -> None:
    fns = [cartpole(render_mode="rgb_array") for _ in range(3)]
    with make_vector_env({"type": "subprocess"}, fns, tile_frames=True) as envs:
        envs.reset(seed=0)
        image = envs.render()
        assert image.shape == (800, 1200, 3)
        frames = envs.call("render")
        np.testing.assert_array_equal(image[400:, :600], frames[2])
        assert not image[400:, 600:].any()  # the fourth cell stays black


def test_tile_images_layout_and_errors() -> None:
    frames = [np.full((2, 2), i, np.uint8) for i in range(5)]
    grid = tile_images(frames, cols=2)
    assert grid.shape == (6, 4)
    np.testing.assert_array_equal(grid[::2, ::2], [[0, 1], [2, 3], [4, 0]])
    with pytest.raises(ValueError, match="at least one frame"):
        tile_images([])
    with pytest.raises(TypeError, match="frame 1 is NoneType, not an array; does env 1 render rgb_array frames"):
        tile_images([frames[0], None])
    with pytest.raises(ValueError, match=re.escape("frames must share frame 0's shape (2, 2) and dtype uint8")):
        tile_images([frames[0], np.zeros((3, 2), np.uint8)])
    with pytest.raises(ValueError, match="cols must be at least 1, got 0"):
        tile_images(frames, cols=0)


# ----- spaces and dtypes ------------------------------------------------------------------------------------------
LEAF_SPACES: dict[str, spaces.Space[Any]] = {
    "f64": spaces.Box(-1, 1, (2,), np.float64),
    "u8": spaces.Box(0, 255, (3, 3), np.uint8),
    "bool": spaces.Box(0, 1, (2,), np.bool_),  # type: ignore[arg-type]
    "i32": spaces.Box(-5, 5, (2,), np.int32),
    "mb": spaces.MultiBinary(3),
    "d": spaces.Discrete(4, start=-1),
    "md": spaces.MultiDiscrete([2, 3]),
    "t": spaces.Tuple((spaces.Box(0, 1, (), np.float16), spaces.Discrete(2))),
}


class SampleEnv(gym.Env[Any, int]):
    """Observations sampled from ``space``, seeded by reset."""

    action_space = spaces.Discrete(2)  # type: ignore[assignment]

    def __init__(self, space: spaces.Space[Any], high: float = 1.0) -> None:
        self.observation_space = space

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        self.observation_space.seed(int(self.np_random.integers(2**31)))
        return self.observation_space.sample(), {}

    def step(self, action: int) -> tuple[Any, float, bool, bool, dict]:
        return self.observation_space.sample(), 0.0, False, False, {}


def leaf_dtypes(value: Any, space: spaces.Space[Any], path: str = "obs") -> list[tuple[str, Any, Any]]:
    if isinstance(space, spaces.Dict):
        return [leaf for key, sub in space.spaces.items() for leaf in leaf_dtypes(value[key], sub, f"{path}.{key}")]
    if isinstance(space, spaces.Tuple):
        return [leaf for i, sub in enumerate(space.spaces) for leaf in leaf_dtypes(value[i], sub, f"{path}[{i}]")]
    return [(path, value.dtype, space.dtype)]


@pytest.mark.parametrize(
    "cfg",
    [{"type": "base"}, {"type": "subprocess"}, {"type": "subprocess", "shared_memory": False}],
    ids=["base", "subprocess-shm", "subprocess-pickled"],
)
def test_observation_leaves_keep_the_space_dtypes(cfg: dict[str, Any]) -> None:
    space = spaces.Dict(LEAF_SPACES)
    fns = [gymnasium_env_fn(partial(SampleEnv, space)) for _ in range(2)]
    for mode in ("NextStep", "SameStep"):
        with make_vector_env(cfg, fns, autoreset_mode=mode) as envs:
            assert envs.observation_space == batch_space(space, 2)
            for obs in (envs.reset(seed=0)[0], envs.step(np.array([0, 1]))[0]):
                assert obs in envs.observation_space
                assert [(p, a) for p, a, b in leaf_dtypes(obs, envs.observation_space) if a != b] == []


def test_observation_mode_different_batches_each_env_space() -> None:
    boxes = [spaces.Box(0, high, (2,), np.float32) for high in (1.0, 2.0, 3.0)]
    fns = [gymnasium_env_fn(partial(SampleEnv, box)) for box in boxes]
    for cfg in ({"type": "base"}, {"type": "subprocess", "shared_memory": False}, {"type": "subprocess"}):
        with make_vector_env(cfg, fns, observation_mode="different") as envs:
            assert envs.observation_space == batch_differing_spaces(boxes)
            assert envs.single_observation_space == boxes[0]
            obs, _ = envs.reset(seed=0)
            assert obs in envs.observation_space
    for cfg in ({"type": "base"}, {"type": "subprocess"}):  # equal shapes and dtypes share one memory layout
        with pytest.raises(BatchSpecError, match=r"env 1 has .*Box\(0.0, 2.0.*env 0 has .*Box\(0.0, 1.0.*'different'"):
            make_vector_env(cfg, fns)
    wide = [gymnasium_env_fn(partial(SampleEnv, spaces.Box(0, 1, (n,), np.float32))) for n in (2, 3)]
    with pytest.raises(BatchSpecError, match=r"env 1 has observation space .*\(3,\).*differs in shape or dtype"):
        make_vector_env({"type": "base"}, wide, observation_mode="different")


def test_observation_mode_pair_and_bad_modes() -> None:
    box = spaces.Box(0, 1, (2,), np.float32)
    batched = spaces.Box(0, np.arange(1, 7, dtype=np.float32).reshape(3, 2), (3, 2), np.float32)
    fns = [gymnasium_env_fn(partial(SampleEnv, box)) for _ in range(3)]
    with make_vector_env({"type": "base"}, fns, observation_mode=(batched, box)) as envs:
        assert envs.observation_space is batched and envs.single_observation_space is box
    with pytest.raises(ValueError, match=r"Invalid `observation_mode`.*actual got other"):
        make_vector_env({"type": "base"}, fns, observation_mode="other")
    with pytest.raises(TypeError, match="an observation_mode pair holds two spaces"):
        make_vector_env({"type": "base"}, fns, observation_mode=(batched, "single"))  # type: ignore[arg-type]


def test_gymnasium_env_keeps_the_env_as_it_is() -> None:
    env = GymnasiumPassthroughEnv(gym.make("CartPole-v1"))
    assert env.observation_space == gym.make("CartPole-v1").observation_space
    env.reset()
    ts = env.step(0)
    assert ts.info == {}  # no eval_episode_return or other wrapper additions
    env.set_wrapper_attr("gravity", 3.0)
    assert env.gymnasium_env.unwrapped.gravity == 3.0  # type: ignore[attr-defined]
    env.set_wrapper_attr("marker", 1)  # a new name goes onto the gymnasium env, as gymnasium's wrappers do
    assert env.gymnasium_env.get_wrapper_attr("marker") == 1
    with pytest.raises(AttributeError, match="GymnasiumPassthroughEnv has no attribute '_private'"):
        env._private  # noqa: B018
    with pytest.raises(AttributeError, match="has no attribute 'nothing', and its gymnasium env"):
        env.nothing  # noqa: B018
    with pytest.raises(TypeError, match="gymnasium_env_fn takes a function that makes a gymnasium env"):
        gymnasium_env_fn(gym.make("CartPole-v1"))  # type: ignore[arg-type]
    env.close()


def test_attribute_reads_after_close_raise() -> None:
    envs = make_vector_env({"type": "base"}, [cartpole() for _ in range(2)])
    envs.close()
    for read in (lambda: envs.get_attr("gravity"), lambda: envs.render(), lambda: envs.render_mode):
        with pytest.raises(EnvManagerError, match="ManagerVectorEnv is closed"):
            read()
    with pytest.raises(EnvManagerError, match=r"step\(\) after close\(\)"):
        envs.step(np.array([0, 0]))


def test_declared_spaces_are_checked_and_used() -> None:
    reference = gym.make("CartPole-v1")
    declared = EnvSpaces(reference.observation_space, reference.action_space)
    fns = [gymnasium_env_fn(partial(gym.make, "CartPole-v1"), declared) for _ in range(2)]
    with make_vector_env({"type": "subprocess"}, fns) as envs:
        assert envs.manager.env_spaces == declared  # known without probing an env
        obs, _ = envs.reset(seed=3)
        np.testing.assert_array_equal(obs[0], reference.reset(seed=3)[0])
        np.testing.assert_array_equal(envs.step(np.array([1, 0]))[0][0], reference.step(1)[0])
    wrong = EnvSpaces(spaces.Box(-1, 1, (4,), np.float32), reference.action_space)
    with pytest.raises(EnvSpecError, match="env 0 was built with spaces"):
        make_vector_env({"type": "subprocess"}, [gymnasium_env_fn(partial(gym.make, "CartPole-v1"), wrong)])
    with pytest.raises(TypeError, match="spaces must be an EnvSpaces, got tuple"):
        gymnasium_env_fn(partial(gym.make, "CartPole-v1"), (reference.observation_space,))  # type: ignore[arg-type]
    reference.close()
