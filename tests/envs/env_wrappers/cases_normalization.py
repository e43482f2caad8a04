"""Shape-proof cases for the normalization wrappers."""

from tests.envs.env_wrappers.catalogue import ShapeCase

CASES = [
    ShapeCase("obs_norm", "vector"),
    ShapeCase("obs_norm", "vector", {"clip_range": None, "warmup": 0}),
    ShapeCase("obs_norm", "vector_float64", {"clip_range": (-2.0, 3.0), "warmup": 5}),
    ShapeCase("obs_norm", "vector_box_action", {"update": False}),
    ShapeCase("obs_norm", "vector_reward", {"epsilon": 1e-4, "warmup": 3}),
    ShapeCase("obs_norm", "image_hwc", {"warmup": 4}),
    ShapeCase("obs_norm", "image_gray", {"clip_range": [-1.0, 1.0]}),
    ShapeCase("obs_norm", "dict_obs", {"fields": ["state.pos"], "warmup": 2}),
    ShapeCase("obs_norm", "dict_obs", {"fields": ["state.pos", "state.vel", "image"], "clip_range": (-3.0, 3.0)}),
    ShapeCase("static_obs_norm", "vector", {"mean": 1.0, "std": 2.0}),
    ShapeCase(
        "static_obs_norm", "vector_float64", {"mean": [0.1, 0.2, 0.3], "std": [1.0, 2.0, 4.0], "clip_range": (-1, 1)}
    ),
    ShapeCase("static_obs_norm", "vector_reward", {"mean": 0.0, "std": [1.0, 2.0, 3.0, 4.0]}),
    ShapeCase("static_obs_norm", "image_hwc", {"mean": [120.0, 110.0, 100.0], "std": 64.0, "clip_range": (-2.0, 2.0)}),
    ShapeCase("static_obs_norm", "image_chw", {"mean": [[[120.0]], [[110.0]], [[100.0]]], "std": 64.0}),
    ShapeCase("static_obs_norm", "dict_obs", {"fields": ["state.pos"], "mean": [1.0, 0.0, -1.0], "std": 5.0}),
    ShapeCase("reward_norm", "vector"),
    ShapeCase("reward_norm", "vector_reward", {"reward_discount": 0.9, "warmup": 5}),
    ShapeCase("reward_norm", "image_hwc", {"reward_discount": 1.0, "epsilon": 1e-4, "warmup": 0}),
    ShapeCase("reward_norm", "dict_obs", {"warmup": 10}),
    ShapeCase("reward_norm", "vector_float64", {"reward_discount": 0.0, "warmup": 1}),
]
