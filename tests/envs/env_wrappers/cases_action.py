"""Shape-proof cases for the action wrappers."""

from tests.envs.env_wrappers.catalogue import ShapeCase

CASES = [
    ShapeCase("continuous_action_clip", "vector_box_action"),
    ShapeCase("continuous_action_clip", "vector_float64"),
    ShapeCase("continuous_action_clip", "dict_obs"),
    ShapeCase("normalized_action", "vector_box_action"),
    ShapeCase("normalized_action", "vector_float64"),
    ShapeCase("normalized_action", "dict_obs"),
    ShapeCase("discrete_action", "vector_box_action"),
    ShapeCase("discrete_action", "vector_float64", {"bins": 2}),
    ShapeCase("discrete_action", "dict_obs", {"bins": 11}),
    # the catalogue's Discrete spaces are zero-based; Discrete(n, start=s) is covered in test_action.py
    ShapeCase("action_offset", "vector"),
    ShapeCase("action_offset", "image_hwc"),
    ShapeCase("action_offset", "vector_reward"),
    ShapeCase("temporally_correlated_noise", "vector_box_action"),
    ShapeCase("temporally_correlated_noise", "vector_float64", {"theta": 1.0, "sigma": 3.0, "dt": 0.5}),
    ShapeCase("temporally_correlated_noise", "dict_obs", {"sigma": 0.0}),
    ShapeCase("time_shift", "vector"),
    ShapeCase("time_shift", "vector_box_action", {"shift": 3}),
    ShapeCase("time_shift", "vector_float64", {"shift": 2, "default_action": [0.5]}),
    ShapeCase("time_shift", "dict_obs", {"shift": 0}),
    ShapeCase("time_shift", "image_hwc", {"shift": 4, "default_action": 3}),
]
