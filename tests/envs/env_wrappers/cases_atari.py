"""Shape-proof cases for the Atari-style wrappers."""

from tests.envs.env_wrappers.catalogue import ShapeCase

CASES = [
    # noop_reset: any observation, Discrete actions
    ShapeCase("noop_reset", "vector"),
    ShapeCase("noop_reset", "image_hwc", {"noop_max": 5}),
    ShapeCase("noop_reset", "image_chw", {"noop_max": 3, "noop_action": 2}),
    ShapeCase("noop_reset", "image_gray"),
    ShapeCase("noop_reset", "vector_reward", {"noop_max": 4}),
    ShapeCase("noop_reset", "image_lives"),
    ShapeCase("noop_reset", "ale_pong"),
    ShapeCase("noop_reset", "ale_breakout", {"noop_max": 10}),
    # max_and_skip: array observations
    ShapeCase("max_and_skip", "vector"),
    ShapeCase("max_and_skip", "vector_box_action", {"skip": 2}),
    ShapeCase("max_and_skip", "vector_float64", {"skip": 3}),
    ShapeCase("max_and_skip", "image_hwc"),
    ShapeCase("max_and_skip", "image_chw", {"skip": 1}),
    ShapeCase("max_and_skip", "image_gray", {"skip": 2}),
    ShapeCase("max_and_skip", "vector_reward", {"skip": 3}),
    ShapeCase("max_and_skip", "image_lives"),
    ShapeCase("max_and_skip", "ale_pong"),
    ShapeCase("max_and_skip", "ale_breakout", {"skip": 2}),
    # episodic_life: ALE lives or info['lives'], Discrete actions
    ShapeCase("episodic_life", "image_lives"),
    ShapeCase("episodic_life", "vector"),
    ShapeCase("episodic_life", "image_chw"),
    ShapeCase("episodic_life", "vector_reward"),
    ShapeCase("episodic_life", "ale_pong"),
    ShapeCase("episodic_life", "ale_breakout"),
    # fire_reset: passes through anything without FIRE
    ShapeCase("fire_reset", "vector"),
    ShapeCase("fire_reset", "vector_box_action"),
    ShapeCase("fire_reset", "image_hwc"),
    ShapeCase("fire_reset", "dict_obs"),
    ShapeCase("fire_reset", "vector_reward"),
    ShapeCase("fire_reset", "ale_pong"),
    ShapeCase("fire_reset", "ale_breakout"),
    # terminal_on_life_loss: any spaces
    ShapeCase("terminal_on_life_loss", "image_lives"),
    ShapeCase("terminal_on_life_loss", "vector_box_action"),
    ShapeCase("terminal_on_life_loss", "dict_obs"),
    ShapeCase("terminal_on_life_loss", "vector_reward"),
    ShapeCase("terminal_on_life_loss", "ale_breakout"),
    # ram: 1-D vectors are reshaped; images need ALE
    ShapeCase("ram", "vector"),
    ShapeCase("ram", "vector_float64"),
    ShapeCase("ram", "vector_reward"),
    ShapeCase("ram", "ale_pong"),
    ShapeCase("ram", "ale_breakout"),
]
