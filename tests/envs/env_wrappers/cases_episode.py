"""Shape-proof cases for the episode wrappers (all identity on spaces; they change episode boundaries)."""

from tests.envs.env_wrappers.catalogue import ShapeCase

_INPUTS = (
    "vector",
    "vector_box_action",
    "vector_float64",
    "vector_reward",
    "image_hwc",
    "image_chw",
    "image_gray",
    "image_lives",
    "dict_obs",
)

CASES = [
    *(ShapeCase("eval_episode_return", env) for env in _INPUTS),
    # Limits shorter than the catalogue's 15-step episodes, so 20 steps cross several truncations.
    *(ShapeCase("time_limit", env, {"max_episode_steps": 7}) for env in _INPUTS),
    ShapeCase("time_limit", "vector", {"max_episode_steps": 1}),
    ShapeCase("time_limit", "ale_pong", {"max_episode_steps": 6}),
    *(ShapeCase("non_episodic", env) for env in _INPUTS),
    ShapeCase("non_episodic", "ale_breakout"),
    *(ShapeCase("random_first_episode_length", env, {"max_first_episode_length": 6}) for env in _INPUTS),
    ShapeCase("random_first_episode_length", "vector", {"max_first_episode_length": 3, "num_episodes": 3}),
    ShapeCase("random_first_episode_length", "ale_pong", {"max_first_episode_length": 5}),
    *(ShapeCase("record_episode_statistics", env) for env in _INPUTS),
    ShapeCase("record_episode_statistics", "vector_reward", {"deque_size": 2}),
    ShapeCase("record_episode_statistics", "ale_breakout", {"deque_size": 3}),
]
