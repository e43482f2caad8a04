"""Env types ding registers itself, which a config names without ``import_names``.

- :mod:`.multitask_env`: ``multitask``, several registered envs behind one spec;
- :mod:`.spare_envs`: ``spare_envs``, one env whose slow resets spare instances hide;
- :mod:`.unittest_envs`: small envs whose optimal policy and value are known, for testing learners.
"""
