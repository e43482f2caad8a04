"""Shape-proof cases for the observation reshaping wrappers."""

from tests.envs.env_wrappers.catalogue import ShapeCase

_BOX_INPUTS = (
    "vector",
    "vector_box_action",
    "vector_float64",
    "vector_reward",
    "image_hwc",
    "image_chw",
    "image_gray",
    "image_lives",
)

CASES = [
    *(ShapeCase("flat_obs", env) for env in (*_BOX_INPUTS, "dict_obs", "ale_pong")),
    *(ShapeCase("flatten_observation", env) for env in (*_BOX_INPUTS, "dict_obs", "ale_breakout")),
    ShapeCase("flatten_observation", "dict_obs", {"fields": ["image"]}),
    ShapeCase("flatten_observation", "dict_obs", {"fields": ["state"]}),
    ShapeCase("flatten_observation", "dict_obs", {"fields": ["image", "state.vel"]}),
]
