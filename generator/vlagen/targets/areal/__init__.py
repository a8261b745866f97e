"""AReaL 1.0: the plan, checks, config layout and contract that :mod:`vlagen.targets.areal_1_0`
declares. AReaL has no env or VLA classes; the adapter runs episodes inside a
``RolloutWorkflow``.

AReaL 1.0.4 (the only release on the index; its ``RolloutWorkflow`` is unchanged at the
unpublished tag v2.0.0, so a 2.0 line is one more declaration) deleted ``areal.api.env_api``:
env logic lives in a workflow whose ``async arun_episode(engine, data)`` returns a trajectory
tensor dict. Generation goes through AReaL's inference servers (SGLang, vLLM:
``engine.agenerate(ModelRequest)``), training through its FSDP engine on token log-probs over
the whole vocabulary. The FSDP engine loads causal LMs and the vision-language models of
``VALID_VISION_MODELS`` (``areal/engine/core/model.py``) only, so the VLA must sit on a Qwen-VL
backbone (``model.backbone``) whose unused vocabulary tail holds the action tokens, and its
decoding must be a sampler's (one token after another: the ``openvla`` and ``waypoint``
families). Its critic path builds ``AutoModelForTokenClassification`` (``fsdp_engine.py``
``_create_llm_actor_or_critic``), which no vision-language model has: no PPO with a critic.

What the plan (:mod:`.plan`) decides (file references are to AReaL 1.0.4):

- One dataset row is one initial condition (task, state, seed). The package's workflow runs
  ``training.group_size`` episodes of it concurrently, one decision per generation request,
  and returns one trajectory row per decision. AReaL's own grouping
  (``GroupedRolloutWorkflow``, ``gconfig.n_samples``) and group normalization
  (``actor.reward_norm``) are left off: ``Normalization`` slices a batch into runs of
  ``group_size`` rows, and the episodes of a group give a variable number of rows. The
  workflow computes the group-relative credit itself (see the generated ``workflow.py``).
- GPUs: ``rollout.backend`` ``sglang:d{R}p1t1`` plus ``actor.backend`` ``fsdp:d{A}p1t1`` must
  use the cluster's GPUs exactly (AReaL's allocation rule); ``resources.rollout_gpus`` is R.
- Every key of the config is checked against a snapshot of AReaL 1.0.4's config dataclasses
  (``areal_1_0.config.json``, from ``GRPOConfig``; vlagen's tests rebuild it from the
  installed AReaL and compare; :mod:`.layout`), except ``OWN_KEYS``, the package's ``vla``
  section.

:mod:`.checks` holds AReaL's allocation and batch rules; :mod:`.contract` the contract.
"""
