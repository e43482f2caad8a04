"""Models take what the spec says: ObsInput's checks and casts, in every model, from a compiled config's keys."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from gymnasium import spaces

from ding.config.shapes import fill_model_shapes, model_input
from ding.envs.env_wrappers import ScaledFloatFrameWrapper
from ding.envs.values.spaces import EnvSpaces
from ding.errors import ConfigError
from ding.model import C51DQN, DQN, c51_from_config, model_from_config
from ding.model.obs_input import ObsInput
from ding.model.qac import QAC, qac_from_config
from ding.model.vac import VAC, vac_from_config

FRAMES = spaces.Box(0, 255, (4, 36, 36), np.uint8)  # the smallest image the default conv layers take
CONV = [4, 8, 8, 16]


def test_uint8_frames_become_exactly_the_scaled_float_frames() -> None:
    frames = np.random.default_rng(0).integers(0, 256, (5, *FRAMES.shape), dtype=np.uint8)
    frames[0, 0, 0, :2] = (0, 255)
    scaled = ScaledFloatFrameWrapper.new_space(FRAMES, spaces.Discrete(2), None)[0]
    wrapper_values = np.stack([np.asarray(f, np.float32) * np.float32(1 / 255) for f in frames])
    out = ObsInput("DQN", FRAMES.shape, *model_input(FRAMES))(torch.from_numpy(frames))
    assert out.dtype == torch.float32 and np.array_equal(out.numpy(), wrapper_values)
    assert scaled.contains(out.numpy()[0]) and out.min() == 0.0 and out.max() == 1.0


@pytest.mark.parametrize(
    ("space", "batch", "expected"),
    [
        (spaces.Box(-1, 1, (3,), np.float32), np.array([[0.5, -1.0, 1.0]], np.float32), [[0.5, -1.0, 1.0]]),
        (spaces.Box(-1, 1, (3,), np.float64), np.array([[0.5, -1.0, 1.0]]), [[0.5, -1.0, 1.0]]),
        (spaces.Box(-128, 127, (2,), np.int8), np.array([[-128, 127]], np.int8), [[0.0, 1.0]]),
        (spaces.Box(0, 4, (2,), np.int64), np.array([[0, 3]]), [[0.0, 0.75]]),
        (spaces.MultiBinary(2), np.array([[1, 0]], np.int8), [[1.0, 0.0]]),
        (spaces.Box(0, 1, (2,), np.bool_), np.array([[True, False]]), [[1.0, 0.0]]),
    ],
    ids=["float32", "float64", "int8", "int64", "multibinary", "bool"],
)
def test_each_dtype_is_cast_and_integers_scaled_by_their_bounds(
    space: spaces.Space[Any], batch: np.ndarray, expected: list[list[float]]
) -> None:
    layer = ObsInput("DQN", space.shape, *model_input(space))  # type: ignore[arg-type]
    tensor = torch.from_numpy(batch)
    out = layer(tensor)
    assert out.dtype == torch.float32 and out.tolist() == expected
    if tensor.dtype == torch.float32:
        assert out is tensor  # nothing to do: no copy


def test_a_batch_of_another_dtype_or_shape_than_declared_is_named() -> None:
    layer = ObsInput("QAC", (2,), "uint8", [0, 255])
    with pytest.raises(TypeError, match=r"QAC built for obs_dtype uint8 got a batch of dtype float32"):
        layer(torch.zeros(1, 2))
    with pytest.raises(ValueError, match=r"QAC built for obs_shape \(2,\) got a batch of shape \(1, 3\)"):
        layer(torch.zeros(1, 3, dtype=torch.uint8))
    unspecified = ObsInput("QAC", (2,))  # no obs_dtype: any dtype, cast without scaling
    assert unspecified(torch.tensor([[0, 255]], dtype=torch.uint8)).tolist() == [[0.0, 255.0]]


@pytest.mark.parametrize(
    ("dtype", "bounds", "match"),
    [
        ("pixels", None, r"obs_dtype must be a NumPy dtype name .* got 'pixels'"),
        ("<U3", None, r"obs_dtype must be a NumPy dtype name .* got '<U3'"),
        ("float32", [0, 1], r"obs_range scales integer observations; obs_dtype float32 takes obs_range None"),
        ("uint8", [255, 0], r"obs_range must be \[low, high\], two finite numbers with low < high; got \[255, 0\]"),
        ("uint8", [0], r"obs_range must be \[low, high\]"),
        ("uint8", ["0", "255"], r"obs_range must be \[low, high\]"),
    ],
)
def test_bad_input_keys_are_config_errors(dtype: str, bounds: Any, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        ObsInput("DQN", (2,), dtype, bounds)


MODELS = {
    "dqn": lambda cfg: model_from_config({**cfg, "encoder_hidden_size_list": CONV}),
    "c51": lambda cfg: c51_from_config({**cfg, "encoder_hidden_size_list": CONV, "n_atom": 5}),
    "vac": lambda cfg: vac_from_config({**cfg, "encoder_hidden_size_list": CONV}),
    "qac": lambda cfg: qac_from_config({**cfg, "action_shape": 2, "encoder_hidden_size_list": CONV}),
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_model_takes_the_compiled_input_keys_and_gives_what_scaled_floats_give(name: str) -> None:
    policy = fill_model_shapes({"model": {}}, EnvSpaces(FRAMES, spaces.Discrete(3)), "frames")
    model_cfg = dict(policy["model"])
    assert (model_cfg["obs_dtype"], model_cfg["obs_range"]) == ("uint8", [0, 255])
    torch.manual_seed(0)
    model: Any = MODELS[name](model_cfg)
    floats = {**model_cfg, "obs_dtype": "float32", "obs_range": None}
    torch.manual_seed(0)
    reference: Any = MODELS[name](floats)  # the same weights, built for float32 frames in [0, 1]
    frames = torch.from_numpy(np.random.default_rng(1).integers(0, 256, (2, *FRAMES.shape), dtype=np.uint8))
    scaled = frames.to(torch.float32) * float(np.float32(1 / 255))
    seen: list[torch.dtype] = []
    model.obs_input.register_forward_pre_hook(lambda module, args: seen.append(args[0].dtype))
    if name == "qac":
        got, want = model.compute_actor(frames)["logit"][0], reference.compute_actor(scaled)["logit"][0]
        action = torch.zeros(2, 2)
        assert torch.equal(
            model.compute_critic(frames, action)["q_value"], reference(scaled, "compute_critic", action)["q_value"]
        )
    else:
        got, want = model(frames)["logit"], reference(scaled)["logit"]
    assert torch.equal(got, want) and seen and set(seen) == {torch.uint8}
    with pytest.raises(TypeError, match=r"built for obs_dtype uint8 got a batch of dtype float32"):
        model.compute_actor(scaled) if name == "qac" else model(scaled)


@pytest.mark.parametrize("model_cls", [DQN, C51DQN, VAC, QAC])
def test_input_keys_leave_the_state_dict_alone(model_cls: type) -> None:
    plain = model_cls(3, 2)
    typed = model_cls(3, 2, obs_dtype="float64")
    assert list(plain.state_dict()) == list(typed.state_dict())
    typed.load_state_dict(plain.state_dict())  # checkpoints of models built without the keys still load
