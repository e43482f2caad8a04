"""Upper bounds of dizoo env keys whose values size the env's spaces, so that a huge value is refused by name before
a space (whose bounds are arrays of its full shape) or a simulator is built for it.

>>> MAX_FRAME_STACK, MAX_AGENTS, (DMC_FRAME_HEIGHT, DMC_FRAME_WIDTH)
(256, 100, (480, 640))
"""

MAX_FRAME_STACK = 256
"""Frames stacked into one observation: DI-engine's configs stack 4; 256 frames of 84 x 84 are 1.8 MB a step."""

MAX_AGENTS = 100
"""Agents (and landmarks) of a multi-agent particle env: its team state grows with their square (20,400 values)."""

MAX_REWARD_DELAY = 10_000
"""Steps a delayed reward may be held back: ten of MuJoCo's 1000-step episodes (the reward space's bounds are summed
step by step, so a longer delay would take that long to state)."""

DMC_FRAME_HEIGHT, DMC_FRAME_WIDTH = 480, 640
"""The largest frame dm_control's suite renders: its models' offscreen framebuffer."""
