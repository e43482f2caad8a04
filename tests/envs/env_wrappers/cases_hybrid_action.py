"""Shape-proof cases for the hybrid action wrapper."""

from tests.envs.env_wrappers.catalogue import ShapeCase

CASES = [ShapeCase("gym_hybrid_dict_action", "hybrid_action")]
