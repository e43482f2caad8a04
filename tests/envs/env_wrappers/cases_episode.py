"""Shape-proof cases for the episode wrappers."""

from tests.envs.env_wrappers.catalogue import ShapeCase

CASES = [
    ShapeCase("eval_episode_return", "vector"),
    ShapeCase("eval_episode_return", "vector_reward"),
]
