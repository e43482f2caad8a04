"""Hypothesis strategies for the keyword arguments of every registered wrapper, given the spaces it will wrap.

``KWARGS[name](spaces, env)`` is a strategy of keyword arguments that suit ``spaces`` (image fields for image
wrappers, crops that fit the frame, actions from the action space, ...), or None when the wrapper does not
apply to them. The ahead-of-time rule still has the last word: a chain keeps only steps it accepts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium import spaces
from hypothesis import strategies as st

from ding.envs.env_wrappers.image import image_dims, image_layout
from ding.envs.values.spaces import EnvSpaces
from ding.errors import ShapeRuleError
from tests.envs.env_wrappers.chain_envs import ChainEnv

Kwargs = dict[str, Any]
KwargsRule = Callable[[EnvSpaces, ChainEnv], "st.SearchStrategy[Kwargs] | None"]

_CV2 = (np.dtype(np.uint8), np.dtype(np.uint16), np.dtype(np.float32))
ORDERS = st.sampled_from(["auto", "auto", "hwc", "chw"])
FLOATS = st.sampled_from(
    [-np.inf, -1e30, -2.0, -1.0, -0.5, 0.0, 1e-30, 0.055, 0.3, 0.5, 1.0, 1.5, 3.0, 1e30, np.inf]
) | st.floats(-1e3, 1e3)


def nodes(space: spaces.Space[Any], prefix: str = "") -> list[tuple[str, spaces.Space[Any]]]:
    """Every node under a Dict/Tuple observation, by its ``"a.b"`` path (the root left out)."""
    out: list[tuple[str, spaces.Space[Any]]] = []
    children: list[tuple[str, spaces.Space[Any]]] = []
    if isinstance(space, spaces.Dict):
        children = list(space.spaces.items())
    elif isinstance(space, spaces.Tuple):
        children = [(str(i), sub) for i, sub in enumerate(space.spaces)]
    for key, sub in children:
        path = f"{prefix}{key}"
        out.append((path, sub))
        out.extend(nodes(sub, f"{path}."))
    return out


def is_image(space: spaces.Space[Any], *, opencv: bool = False) -> bool:
    ok = isinstance(space, spaces.Box) and len(space.shape) in (2, 3) and min(space.shape) > 0
    return ok and (not opencv or space.dtype in _CV2)


def is_box(space: spaces.Space[Any]) -> bool:
    return isinstance(space, spaces.Box)


def fields(obs: spaces.Space[Any], ok: Callable[[spaces.Space[Any]], bool]) -> st.SearchStrategy[Any] | None:
    """None for a plain observation that suits ``ok``; else a list of paths to leaves that do (no path inside
    another); None as a strategy when nothing suits."""
    if not isinstance(obs, (spaces.Dict, spaces.Tuple)):
        return st.just(None) if ok(obs) else None
    paths = [p for p, sub in nodes(obs) if not isinstance(sub, (spaces.Dict, spaces.Tuple)) and ok(sub)]
    if not paths:
        return None
    return st.lists(st.sampled_from(paths), min_size=1, max_size=min(3, len(paths)), unique=True)


def _leaf(obs: spaces.Space[Any], path: str | None) -> spaces.Space[Any]:
    node = obs
    if path is not None:
        for key in path.split("."):
            node = node[int(key)] if isinstance(node, spaces.Tuple) else node[key]  # type: ignore[index]
    return node


def _frame_size(box: spaces.Box, order: str) -> tuple[int, int]:
    try:
        height, width, _ = image_dims(box.shape, image_layout(box.shape, order))
    except ShapeRuleError:
        return box.shape[0], box.shape[1]
    return height, width


def _with_fields(obs: spaces.Space[Any], ok: Callable[[spaces.Space[Any]], bool], **rest: Any) -> Any:
    chosen = fields(obs, ok)
    return None if chosen is None else st.fixed_dictionaries({"fields": chosen, **rest})


@st.composite
def _crop(draw: st.DrawFn, obs: spaces.Space[Any], fixed: bool) -> Kwargs:
    chosen = draw(fields(obs, is_image))  # type: ignore[arg-type]
    order = draw(ORDERS)
    frames = [_leaf(obs, path) for path in (chosen or [None])]
    height, width = min(_frame_size(f, order) for f in frames)  # type: ignore[arg-type]
    if not fixed:
        share = draw(st.booleans())
        return {
            "height": draw(st.integers(1, height)),
            "width": draw(st.integers(1, width)),
            "share_cropping": share,
            "channel_order": order,
            "fields": chosen,
        }
    top, left = draw(st.integers(0, height - 1)), draw(st.integers(0, width - 1))
    return {
        "top": top,
        "left": left,
        "height": draw(st.none() | st.integers(1, height - top)),
        "width": draw(st.none() | st.integers(1, width - left)),
        "channel_order": order,
        "fields": chosen,
    }


def _action_value(space: spaces.Space[Any]) -> st.SearchStrategy[Any]:
    """Actions of ``space`` in config form (ints and lists), drawn through the space's own sampler."""

    def sample(seed: int) -> Any:
        space.seed(seed)
        value = space.sample()
        return value.tolist() if isinstance(value, np.ndarray) else (int(value) if np.isscalar(value) else value)

    return st.integers(0, 2**16).map(sample)


def _noop(s: EnvSpaces, env: ChainEnv) -> Any:
    act = s.action
    if not isinstance(act, spaces.Discrete):
        return None
    noop = st.just(0) if env.ale else st.integers(int(act.start), int(act.start + act.n - 1))
    return st.fixed_dictionaries({"noop_max": st.integers(1, 5), "noop_action": noop})


def _lives(s: EnvSpaces, env: ChainEnv) -> Any:
    return st.just({}) if env.lives and isinstance(s.action, spaces.Discrete) else None


def _ram(s: EnvSpaces, env: ChainEnv) -> Any:
    obs = s.observation
    ok = isinstance(obs, spaces.Box) and (len(obs.shape) == 1 or (env.ale and len(obs.shape) in (2, 3)))
    return st.fixed_dictionaries({"render": st.booleans()}) if ok else None


def _repeat(name: str) -> KwargsRule:
    return lambda s, env: st.fixed_dictionaries({name: st.integers(1, 4)}) if is_box(s.reward) else None


def _box_action(s: EnvSpaces, env: ChainEnv) -> Any:
    return st.just({}) if isinstance(s.action, spaces.Box) else None


def _finite_box_action(rest: dict[str, Any]) -> KwargsRule:
    def rule(s: EnvSpaces, env: ChainEnv) -> Any:
        act = s.action
        finite = isinstance(act, spaces.Box) and bool(np.all(np.isfinite(act.low)) and np.all(np.isfinite(act.high)))
        return st.fixed_dictionaries(rest) if finite else None

    return rule


def _clip_range() -> st.SearchStrategy[Any]:
    pair = st.tuples(FLOATS, FLOATS).filter(lambda p: p[0] < p[1])
    return st.none() | pair | pair.map(list)


def _scalar_weights(s: EnvSpaces, env: ChainEnv) -> Any:
    rew = s.reward
    if not (isinstance(rew, spaces.Box) and len(rew.shape) == 1 and rew.shape[0] >= 2):
        return None
    weights = st.lists(FLOATS, min_size=rew.shape[0], max_size=rew.shape[0])
    return st.fixed_dictionaries({"weights": st.none() | weights})


def _reward_box(kwargs: st.SearchStrategy[Kwargs]) -> KwargsRule:
    return lambda s, env: kwargs if isinstance(s.reward, spaces.Box) and len(s.reward.shape) == 1 else None


def _clip_reward() -> st.SearchStrategy[Kwargs]:
    ranged = st.tuples(FLOATS, FLOATS).filter(lambda p: p[0] < p[1])
    return st.just({}) | ranged.map(lambda p: {"low": p[0], "high": p[1], "sign": False})


IMAGE_WRAPPERS = (
    "warp_frame",
    "frame_resize",
    "gray_scale",
    "scaled_float_frame",
    "frame_crop",
    "episodic_random_frame_crop",
    "image_channel_first",
    "obs_transpose",
    "frame_flip",
    "frame_stack",
)

KWARGS: dict[str, KwargsRule] = {
    # atari and repeat
    "noop_reset": _noop,
    "max_and_skip": lambda s, env: (
        st.fixed_dictionaries({"skip": st.integers(1, 4), "direct_emulator": st.booleans()})
        if is_box(s.observation) and is_box(s.reward)
        else None
    ),
    "episodic_life": _lives,
    "fire_reset": lambda s, env: st.just({}),
    "terminal_on_life_loss": _lives,
    "ram": _ram,
    "frame_skip": lambda s, env: (
        st.fixed_dictionaries({"skip": st.integers(1, 4), "cumulative_reward": st.booleans()})
        if is_box(s.reward)
        else None
    ),
    "action_repeat": _repeat("action_repeat"),
    # images
    "warp_frame": lambda s, env: _with_fields(
        s.observation,
        lambda b: is_image(b, opencv=True),
        size=st.integers(1, 100),
        grayscale=st.booleans(),
        channel_order=ORDERS,
    ),
    "frame_resize": lambda s, env: _with_fields(
        s.observation,
        lambda b: is_image(b, opencv=True),
        height=st.integers(1, 100),
        width=st.integers(1, 100),
        interpolation=st.sampled_from(["nearest", "linear", "area", "cubic"]),
        channel_order=ORDERS,
    ),
    "gray_scale": lambda s, env: _with_fields(
        s.observation,
        lambda b: is_image(b, opencv=True) and 3 in b.shape,
        keep_dim=st.booleans(),
        channel_order=ORDERS,
    ),
    "scaled_float_frame": lambda s, env: _with_fields(s.observation, is_box),
    "frame_crop": lambda s, env: _crop(s.observation, True) if fields(s.observation, is_image) is not None else None,
    "episodic_random_frame_crop": lambda s, env: (
        _crop(s.observation, False) if fields(s.observation, is_image) is not None else None
    ),
    "image_channel_first": lambda s, env: _with_fields(s.observation, is_image),
    "obs_transpose": lambda s, env: _with_fields(s.observation, is_image),
    "frame_flip": lambda s, env: _with_fields(
        s.observation, is_image, horizontal=st.booleans(), vertical=st.booleans(), channel_order=ORDERS
    ),
    "frame_stack": lambda s, env: _with_fields(s.observation, is_box, n_frames=st.integers(1, 10)),
    # task tools: task_id and curriculum need a MultitaskEnv inside (their chains are proven in cases_task_tools.py)
    "task_id": lambda s, env: None,
    "curriculum": lambda s, env: None,
    "profiler": lambda s, env: st.fixed_dictionaries({"log_at_close": st.booleans()}),
    # observations
    "flat_obs": lambda s, env: st.just({}),
    "flatten_observation": lambda s, env: _with_fields(
        s.observation, lambda b: isinstance(b, (spaces.Box, spaces.MultiBinary))
    ),
    "obs_norm": lambda s, env: _with_fields(
        s.observation,
        is_box,
        clip_range=_clip_range(),
        epsilon=st.sampled_from([0.0, 1e-4, 1e-2]),
        warmup=st.integers(0, 5),
        update=st.booleans(),
    ),
    "static_obs_norm": lambda s, env: _with_fields(
        s.observation,
        is_box,
        mean=FLOATS,
        std=st.sampled_from([1e-30, 0.1, 1.0, 3.0, 255.0, 1e30]) | st.floats(1e-6, 1e6),
        clip_range=_clip_range(),
    ),
    # rewards
    "reward_norm": _reward_box(
        st.fixed_dictionaries(
            {
                "reward_discount": st.floats(0.0, 1.0),
                "epsilon": st.sampled_from([0.0, 1e-4]),
                "warmup": st.integers(0, 5),
            }
        )
    ),
    "clip_reward": _reward_box(_clip_reward()),
    "delay_reward": _reward_box(st.fixed_dictionaries({"delay_reward_step": st.integers(0, 20)})),
    "scalar_reward": _scalar_weights,
    "reward_in_obs": _reward_box(st.just({})),
    # actions
    "continuous_action_clip": _box_action,
    "normalized_action": _finite_box_action({}),
    "discrete_action": _finite_box_action({"bins": st.integers(2, 9)}),
    "action_offset": lambda s, env: (
        st.just({}) if isinstance(s.action, (spaces.Discrete, spaces.MultiDiscrete)) else None
    ),
    "temporally_correlated_noise": lambda s, env: (
        st.fixed_dictionaries({"theta": st.floats(0.0, 1.0), "sigma": st.floats(0.0, 1.0), "dt": st.floats(0.001, 1.0)})
        if isinstance(s.action, spaces.Box)
        else None
    ),
    "time_shift": lambda s, env: st.fixed_dictionaries(
        {"shift": st.integers(0, 6), "default_action": st.none() | _action_value(s.action)}
    ),
    "gym_hybrid_dict_action": lambda s, env: (
        st.just({}) if isinstance(s.action, spaces.Tuple) and len(s.action.spaces) == 2 else None
    ),
    # history
    "action_observation": lambda s, env: st.just({}) if not isinstance(s.action, (spaces.Dict, spaces.Tuple)) else None,
    "obs_plus_prev_action_reward": lambda s, env: (
        st.just({}) if not isinstance(s.action, (spaces.Dict, spaces.Tuple)) and is_box(s.reward) else None
    ),
    "transformers": lambda s, env: st.fixed_dictionaries({"expected_episode_length": st.integers(1, 8)}),
    # episodes
    "eval_episode_return": lambda s, env: st.just({}),
    "time_limit": lambda s, env: st.fixed_dictionaries({"max_episode_steps": st.none() | st.integers(1, 50)}),
    "non_episodic": lambda s, env: st.just({}),
    "random_first_episode_length": lambda s, env: st.fixed_dictionaries(
        {"max_first_episode_length": st.none() | st.integers(1, 20), "num_episodes": st.integers(1, 3)}
    ),
    "record_episode_statistics": lambda s, env: st.fixed_dictionaries({"deque_size": st.integers(1, 5)}),
}
