"""verl 0.7: the plan, checks, config layout and contract that :mod:`vlagen.targets.verl_0_7`
declares.

VLA training lives in ``verl/experimental/vla`` of the v0.7.1 source tree only. The verl 0.7.1
wheel ships that folder's two YAML files, not its code (it has no ``__init__.py``), verl 0.8+
has no VLA code at all, and verl's VLA successor, verl-vla, dropped the PPO command and
replaced the env contract (see ``UNSUPPORTED`` in :mod:`vlagen.targets`). So the target is a
source checkout of tag v0.7.1, and the generated README installs exactly that.

What verl 0.7.1 fixes in code, and so what the plan works around or checks (file references are
to ``verl/experimental/vla/`` at v0.7.1):

- ``workers/env/env_worker.py``: env selection is an ``if/elif`` on
  ``env.train.simulator_type`` (libero, isaac); the package's ``EnvWorker`` subclass adds its
  own type, installed in every Ray worker by a ``worker_process_setup_hook``.
- ``create_env_batch_dataproto`` keeps ``full_image``, ``wrist_image``, ``state`` and
  ``task_descriptions`` only: at most two cameras reach the policy.
- ``naive_rollout_rob.py`` / ``dp_rob.py`` hard-code OpenVLA-OFT's LIBERO prompt, a 224x224
  resize, ``unnorm_key="libero_10_no_noops"`` and a 32000-token vocabulary: the package's own
  rollout and actor (on the policy core) replace them, so the spec's values flow through.
- ``main_ppo.calculate_reward`` rewards success only (any termination); ``env_loop.py`` drops
  the env's rewards and ``rob_ray_trainer.flatten_trajectories`` drops every non-tensor (GRPO's
  ``uid``): the package's env loop keeps rewards and ``uid``, its reward function reads the
  spec's reward terms, and a wrapper of ``flatten_trajectories`` repeats the non-tensors.
- One training step resets every env once (``reset_envs_to_state_ids`` asserts
  ``num_envs * pipeline_stage_num`` ids per env worker): data rows x ``rollout.n`` must equal
  the envs of all env workers, checked here. ``RobRayPPOTrainer._validate`` pads a validation
  batch to a multiple of one env worker's envs only, so ``data.val_batch_size`` is
  ``train_batch_size`` (validation then fills every env exactly, as training does).
- The trainer repeats each row ``rollout.n`` times in a row and ``reset_envs_to_state_ids``
  deals the rows to env workers, then to their stages, in order: a stage's envs
  (``env.train.num_envs``) must be a multiple of ``rollout.n``, checked here, or a GRPO group
  would span two stages, whose envs the package's env starts differently.

The config is built as data (:mod:`.plan`) and checked against what verl composes for VLA
training (``verl_0_7.config.json``, rebuilt from the source by :mod:`.snapshot`) before
anything is written (:mod:`.layout`): every key is verl's, with a value of its type, except the
package's own (``OWN_KEYS``) and the ones verl's VLA entry point reads that ``ppo_trainer``
lacks (``ADDED_KEYS``); every key ``rob_ppo_trainer.yaml`` sets is restated, except
``NOT_MIRRORED``. The rules above are checked in :mod:`.checks`; the contract is
:mod:`.contract`.
"""
