"""One env between ding's API and another, a module per direction.

- :mod:`.from_gymnasium`: ``DingEnvWrapper``, any gymnasium env (or one written for gym's APIs) as a ding env;
- :mod:`.to_gymnasium`: ``GymnasiumEnv``, one ding env as a ``gymnasium.Env``;
- :mod:`.from_old_gym`: envs written for gym's APIs (0.21 to 0.26), run through gymnasium's;
- :mod:`.to_sb3`: ``SB3VecEnv``, a whole env manager as stable-baselines3's ``VecEnv`` (so this one module sits
  above the managers, and the package does not import it: ``from ding.envs.bridges.to_sb3 import SB3VecEnv``).
"""
