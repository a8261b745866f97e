"""What several targets share: the config snapshots and the checks of a config against one
(:mod:`.config_schema`), and how a spec's run is placed on GPUs and cut into decisions and
groups (:mod:`.placement`).

A package, not a module beside the declarations, so that target discovery
(:func:`vlagen.paths.builtin_targets`) never takes it for a target.
"""
