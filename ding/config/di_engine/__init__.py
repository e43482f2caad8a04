"""DI-engine's config forms, read into ding's (compatibility): no core module imports this package.

- :mod:`.call_form`: ``compile_config`` in DI-engine's call form as well as ding's (``ding.config.compile_config``);
- :mod:`.files`: ``read_config_directly``, ``read_config_with_system`` and ``save_config`` in DI-engine's form too;
- :mod:`.layout`: ``in_ding_terms``, a config in DI-engine's layout read into ding's, before ding compiles it;
- :mod:`.workers`: DI-engine's ``create_config`` sections for the pipeline's workers, and what ding does not have;
- :mod:`.policy_keys`: the fates of the keys DI-engine writes into every policy section.

ding's compiler (:mod:`ding.config.compiler`) and everything below it know ding's config only.
"""
