"""siiRL 0.2: the plan, checks, config layout and contract that
:mod:`vlagen.targets.siirl_0_2` declares.

siiRL trains with its own bundled OpenVLA / OpenVLA-OFT code; the generated package brings the
env (an adapter on ``BaseVLAEnvironment`` plus the ``_blocking_reset`` / ``_blocking_step`` calls
its rollout really makes), a rollout subclass installed in every Ray worker, the task manifest,
the pipeline and the CLI overrides. What siiRL 0.2.0 fixes in code, and so what this package
checks at plan time (file references are to the siiRL 0.2.0 wheel):

- ``embodied_type`` is ``openvla`` or ``openvla-oft`` (``engine/fsdp_workers.py``); no registry.
- OFT log-probs are reshaped to ``(traj * 8, 7)``, ``vocab_size == 32000`` is asserted and the
  bins are the 256 ids before the last 64 (``engine/actor/embodied_actor.py``).
- The openvla rollout decodes one action per forward (``np.expand_dims(actions, 1)`` in
  ``engine/rollout/embodied_rollout.py``); its tokens are the checkpoint's ``get_action_dim``.
- A Qwen-VL backbone runs siiRL's generic ``openvla`` branches (the rollout's ``generate`` and
  bin-centre decoding, the actor's ``logits[:, -response_length - 1:-1]``): the package's
  ``targets/siirl/model.py`` puts its policy behind that calling convention, and the glue
  loads it in place of siiRL's Prismatic loader, which would rewrite the checkpoint's
  ``config.json`` to OpenVLA's classes (``engine/fsdp_workers.py:759-800``).
- Only images and the prompt reach the model: the rollout never feeds the state.
- The critic (``CriticWorker``) has no embodied path, so PPO/GAE cannot train a VLA.
- The rollout splits a batch into ``num_envs // n`` prompts per chunk and asserts
  ``num_envs >= n``; ``task_file_name`` is packed into 50 bytes.
- The actor (``embodied_actor.update_policy``) asserts that ``traj_mini_batch_size`` divides
  the trajectory length and, for a micro-batch of more than one trajectory, forwards only the
  first one's steps and broadcasts its log-probs over the others' advantages: the plan emits
  a divisor and micro-batches of one trajectory, as siiRL's own scripts do.

Here: :mod:`.plan` (the overrides and numbers), :mod:`.trajectory` (an episode in siiRL's
forward passes and steps), :mod:`.pipeline` (the DAG's nodes), :mod:`.checks` (what siiRL
cannot run), :mod:`.layout` (the overrides against siiRL's dataclasses), :mod:`.contract`,
and :mod:`.reference` (siiRL's own SRPO script, key by key).
"""
