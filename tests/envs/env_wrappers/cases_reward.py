"""Shape-proof cases for the reward wrappers."""

from tests.envs.env_wrappers.catalogue import ShapeCase

CASES = [
    ShapeCase("clip_reward", "vector"),
    ShapeCase("clip_reward", "vector", {"sign": False, "low": -0.5, "high": 1.5}),
    ShapeCase("clip_reward", "vector_reward"),
    ShapeCase("clip_reward", "vector_reward", {"sign": False, "low": -1.0, "high": 0.25}),
    ShapeCase("clip_reward", "image_hwc"),
    ShapeCase("clip_reward", "vector_float64", {"sign": False, "low": 0.0, "high": 2.0}),
    ShapeCase("clip_reward", "ale_pong"),
    ShapeCase("delay_reward", "vector"),
    ShapeCase("delay_reward", "vector", {"delay_reward_step": 3}),
    ShapeCase("delay_reward", "vector_reward", {"delay_reward_step": 4}),
    ShapeCase("delay_reward", "image_lives", {"delay_reward_step": 6}),
    ShapeCase("delay_reward", "dict_obs", {"delay_reward_step": 2}),
    ShapeCase("delay_reward", "vector_float64", {"delay_reward_step": 5}),
    ShapeCase("scalar_reward", "vector_reward"),
    ShapeCase("scalar_reward", "vector_reward", {"weights": [0.5, -1.0, 2.0]}),
    ShapeCase("reward_in_obs", "vector"),
    ShapeCase("reward_in_obs", "vector_reward"),
    ShapeCase("reward_in_obs", "vector_float64"),
    ShapeCase("reward_in_obs", "image_hwc"),
    ShapeCase("reward_in_obs", "dict_obs"),
    ShapeCase("reward_in_obs", "ale_breakout"),
]
