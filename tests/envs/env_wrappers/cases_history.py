"""Shape-proof cases for the previous action/reward wrappers."""

from tests.envs.env_wrappers.catalogue import ShapeCase

_ENVS = ["vector", "vector_box_action", "vector_float64", "dict_obs", "image_hwc", "vector_reward"]

CASES = [ShapeCase(wrapper, env) for wrapper in ("action_observation", "obs_plus_prev_action_reward") for env in _ENVS]
