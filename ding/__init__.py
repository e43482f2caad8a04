"""ding: gym-style env wrappers with static shape declarations, and the env managers that run them."""

__version__ = "0.1.0"
