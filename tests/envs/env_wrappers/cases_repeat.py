"""Shape-proof cases for frame_skip and action_repeat."""

from tests.envs.env_wrappers.catalogue import ShapeCase

CASES = [
    # frame_skip: any spaces, scalar or vector rewards
    ShapeCase("frame_skip", "vector"),
    ShapeCase("frame_skip", "vector_box_action", {"skip": 2}),
    ShapeCase("frame_skip", "image_hwc", {"skip": 3, "cumulative_reward": False}),
    ShapeCase("frame_skip", "dict_obs"),
    ShapeCase("frame_skip", "vector_reward", {"skip": 3}),
    ShapeCase("frame_skip", "vector_reward", {"cumulative_reward": False}),
    ShapeCase("frame_skip", "ale_pong"),
    # action_repeat: any spaces
    ShapeCase("action_repeat", "vector"),
    ShapeCase("action_repeat", "vector_float64", {"action_repeat": 3}),
    ShapeCase("action_repeat", "image_gray", {"action_repeat": 2}),
    ShapeCase("action_repeat", "dict_obs", {"action_repeat": 2}),
    ShapeCase("action_repeat", "vector_reward", {"action_repeat": 4}),
    ShapeCase("action_repeat", "ale_breakout", {"action_repeat": 4}),
]
