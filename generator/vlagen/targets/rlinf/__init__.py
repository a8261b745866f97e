"""RLinf 0.2 and 0.3: the plan, config layout, checks and contracts the two version lines
share, and the table of what differs between them (:mod:`.declaration`), from which
:mod:`vlagen.targets.rlinf_0_2` and :mod:`vlagen.targets.rlinf_0_3` are declared.

RLinf has no env base class and no env registry: ``SupportedEnvType`` (an Enum) is checked in
``validate_embodied_cfg``, ``get_env_cls`` and ``prepare_actions``, and ``get_env_cls`` is an
if/elif chain. Models register through ``register_model`` since 0.3.0 and are an Enum
(``SupportedModel``) with an if/elif ``get_model`` in 0.2. The generated ``register.py`` adds
the package's env and model under their own type names in every process (``RLINF_EXT_MODULE``)
without editing RLinf; this package computes the names, the config and the checks.

The config is built as data (:mod:`.config`), in the layout of RLinf's own example configs
(``rlinf_<version>.config.json``, see :mod:`.snapshot`), and checked against it before
anything is written (:mod:`.layout`): every example key is present with a value of the same
type, except the simulator- and model-specific ones in ``NOT_MIRRORED``. :mod:`.plan` derives
the numbers and names the templates lay out; :mod:`.checks` holds ``validate_embodied_cfg``'s
rules; :mod:`.contract` the contracts.
"""
