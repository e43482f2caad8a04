"""Checks of env classes against ding's env interface.

- :mod:`.env_checker`: ``check_ding_env``, the conformance checks collectors, evaluators and managers rely on;
- :mod:`.space_check`: ``SpaceCheckedEnv``, real values against their predicted spaces at every step of a chain
  (``ding -m spec --check``).

The rules themselves are :mod:`ding.envs.conformance`; DI-engine's checks (``check_all`` ...) are
:mod:`ding.envs.env.env_implementation_check`.
"""
