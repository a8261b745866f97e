"""verl 0.7's config layout: what a generated config may hold beside the keys verl composes
for VLA training (its snapshot, :mod:`.snapshot`), and the check of a config against it."""

from __future__ import annotations

from ..common.config_schema import flat_keys, load_schema, lookup, value_fits

#: The config layout snapshot (:mod:`.snapshot`): ``ppo_trainer`` + ``rob_ppo_trainer``.
SCHEMA = "verl_0_7"
#: File references in messages are to this folder of the v0.7.1 source.
VLA = "verl/experimental/vla"

#: Keys of the generated config that are the package's own (verl passes ``env.train`` whole
#: to the env class, which reads them), each with its reader.
OWN_KEYS = {
    "env.train.backend": "the package's VerlEnv: null runs the spec's simulator, 'synthetic' "
    "the stand-in backend",
    "env.train.group_size": "the package's VerlEnv: envs given one state id start alike in "
    "runs of this many, so two groups of one task on one worker differ; interpolates "
    "actor_rollout_ref.rollout.n, which main_task resolves (OmegaConf.resolve, main_ppo.py)",
    "env.train.workers": "the package's VerlEnv: simulator processes per env stage (null: "
    "the spec's env.workers)",
}
#: Keys ``ppo_trainer`` lacks that verl's VLA entry point reads: upstream scripts pass them
#: as ``+key=...``; in a primary config they are merged in like any other key.
ADDED_KEYS = {
    "trainer.n_env_gpus_per_node": f"read by main_ppo.main_task ({VLA}/main_ppo.py): GPUs of "
    "the env_gpu_pool per node",
    "trainer.n_rollout_gpus_per_node": f"read by main_ppo.main_task ({VLA}/main_ppo.py): GPUs "
    "of the train_rollout_pool per node",
    "ray_kwargs.ray_init.runtime_env.worker_process_setup_hook": f"read by main_ppo.main "
    f"({VLA}/main_ppo.py), merged into ray.init's runtime_env: installs the package's "
    "registration in every Ray worker",
}
#: Keys ``rob_ppo_trainer.yaml`` sets that the generated config leaves out, by prefix, and why.
NOT_MIRRORED = {
    "env.train.task_suite_name": "LIBERO's suite (LiberoEnv)",
    "env.train.init_params.": "LIBERO's constructor kwargs (cameras); the package's env "
    "reads the spec",
    "env.train.reward_coef": "LIBERO's success reward scale; the package's reward weights "
    "the spec's reward terms",
    "env.train.profiler.": "EnvWorker reads it with cfg.train.get('profiler', {}) "
    "(workers/env/env_worker.py): left out, verl's ProfilerConfig defaults (profiling off)",
    "actor_rollout_ref.actor.fsdp_config.wrap_policy.": "names OpenVLA-OFT's Prismatic "
    "classes; without it verl's get_fsdp_wrap_policy wraps what the policy module's "
    "_no_split_modules names",
    "actor_rollout_ref.actor.num_images_in_input": "read by nothing at v0.7.1 "
    "(naive_rollout_rob.py hard-codes 1 image); the package's rollout feeds the spec's cameras",
    "actor_rollout_ref.actor.traj_mini_batch_size": "read by nothing on the PPO path at "
    "v0.7.1 (only the SAC scripts pass it)",
}


def config_problems(config: dict) -> list[str]:
    """How ``config`` differs from what verl composes for VLA training: keys verl has not
    (except :data:`OWN_KEYS` and :data:`ADDED_KEYS`), values of another type, and keys
    ``rob_ppo_trainer.yaml`` sets that ``config`` lacks (except :data:`NOT_MIRRORED`)."""
    layout = load_schema(SCHEMA)
    keys: dict[str, str] = layout["keys"]
    ours = flat_keys({k: v for k, v in config.items() if k not in ("defaults", "hydra")})
    problems = []
    for key, value in ours.items():
        if key in OWN_KEYS or key in ADDED_KEYS:
            continue
        kind = lookup(keys, key)
        if kind is None:
            problems.append(f"{key}: not a key of verl's config (nothing would read it)")
        elif not value_fits(kind, value):
            problems.append(f"{key}: {value!r} is not a {kind}")
    for key in layout["vla_keys"]:
        if any(key == p or (p.endswith(".") and key.startswith(p)) for p in NOT_MIRRORED):
            continue
        if key not in ours:
            problems.append(f"{key}: missing (rob_ppo_trainer.yaml sets a {keys[key]})")
    return problems
