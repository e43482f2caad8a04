"""One env between ding's API and another, a module per direction.

- :mod:`.from_gymnasium`: ``DingEnvWrapper``, any gymnasium env (or one written for gym's APIs) as a ding env;
- :mod:`.to_gymnasium`: ``GymnasiumEnv``, one ding env as a ``gymnasium.Env``;
- :mod:`.from_old_gym`: envs written for gym's APIs (0.21 to 0.26), run through gymnasium's.

stable-baselines3's ``VecEnv`` bridges a whole env manager, so it lives above the managers: :mod:`ding.envs.sb3`.
"""
