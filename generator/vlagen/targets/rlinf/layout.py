"""RLinf's config layout: which keys of RLinf's example configs the generated config leaves
out and why, which only code that cannot run on a CPU reads, and the check of a config
against the examples' layout (its snapshot, :mod:`.snapshot`)."""

from __future__ import annotations

from ...families import FAMILIES
from ..common.config_schema import flat_keys, load_schema, value_fits

#: Example keys the generated config leaves out, by prefix, and why.
NOT_MIRRORED = {
    "cluster.component_placement.": "free-form: one placement per run, not a fixed layout",
    "env.train.init_params.": "LIBERO/ManiSkill constructor kwargs; our env reads the spec",
    "env.eval.init_params.": "LIBERO/ManiSkill constructor kwargs; our env reads the spec",
    "env.train.task_suite_name": "LIBERO",
    "env.eval.task_suite_name": "LIBERO",
    "env.train.reset_gripper_open": "LIBERO",
    "env.eval.reset_gripper_open": "LIBERO",
    "env.train.is_eval": "LIBERO",
    "env.eval.is_eval": "LIBERO",
    "env.train.specific_reset_id": "LIBERO",
    "env.eval.specific_reset_id": "LIBERO",
    "env.train.use_ordered_reset_state_ids": "LIBERO",
    "env.eval.use_ordered_reset_state_ids": "LIBERO",
    "env.train.use_step_penalty": "LIBERO",
    "env.eval.use_step_penalty": "LIBERO",
    "env.train.reward_coef": "LIBERO (our env weights the spec's reward terms)",
    "env.eval.reward_coef": "LIBERO (our env weights the spec's reward terms)",
    "env.train.use_rel_reward": "LIBERO/ManiSkill reward shaping",
    "env.eval.use_rel_reward": "LIBERO/ManiSkill reward shaping",
    "env.eval.policy_setup": "ManiSkill",
    "actor.model.policy_setup": "ManiSkill (prepare_actions' robot layout)",
    "actor.model.implement_version": "OpenVLA-OFT's own loader",
    "actor.model.center_crop": "OpenVLA-OFT's own loader",
    "actor.model.hidden_size": "OpenVLA-OFT's own loader",
    "actor.model.image_size": "OpenVLA-OFT's own loader",
    "actor.model.num_images_in_input": "OpenVLA-OFT's own loader",
    "actor.model.use_film": "OpenVLA-OFT's own loader",
    "actor.model.use_proprio": "OpenVLA-OFT's own loader",
    "actor.model.value_type": "OpenVLA-OFT's own loader",
    "actor.model.vocab_size": "OpenVLA-OFT's own loader",
    "algorithm.reward_coef": "LIBERO (interpolated into env.*.reward_coef)",
    # The package applies the spec's LoRA itself (see rlinf_config), so is_lora is false
    # and RLinf's get_model, the only reader of these two, never reads them.
    "actor.model.lora_rank": "read by RLinf's get_model only when is_lora",
    "actor.model.lora_path": "read by RLinf's get_model only when is_lora",
    "actor.model.unnorm_key": "read by RLinf's own OpenVLA builders; our policy core has "
    "the spec's unnorm_key",
    "actor.model.low_cpu_mem_usage": "read by RLinf's own OpenVLA builders only",
    # Read by nothing on the embodied launch path (the generated fidelity test records the
    # reads of RLinf's env, rollout and actor workers): left out, so no key only looks set.
    "algorithm.normalize_advantages": "read only by the env worker's training pipeline "
    "(runner.use_training_pipeline), which this package does not use",
    "algorithm.kl_penalty": "read by RLinf's reasoning actor only",
    "algorithm.kl_beta": "read by RLinf's reasoning actor only",
    "algorithm.loss_agg_func": "read by RLinf's reasoning actor only",
    "algorithm.clip_ratio_c": "passed to the loss for GR00T N1.6/N1.7 only",
    "algorithm.rewards_lower_bound": "read only with algorithm.filter_rewards: true",
    "algorithm.rewards_upper_bound": "read only with algorithm.filter_rewards: true",
    "rollout.backend": "read by RLinf's reasoning launchers; the embodied entry builds the "
    "HuggingFace rollout worker directly",
    "rollout.generation_backend": "read by RLinf's reasoning launchers only",
    # Only defaulted by validate_fsdp_cfg; read by strategy/fsdp2.py, not under strategy: fsdp.
    "actor.fsdp_config.reshard_after_forward": "read only by RLinf's fsdp2 strategy",
    "actor.fsdp_config.offload_pin_memory": "read only by RLinf's fsdp2 strategy",
    "actor.fsdp_config.use_liger_kernel": "read only when RLinf builds one of its own "
    "HuggingFace models (FSDPModelManager.model_provider_func); get_model builds ours",
    # Only defaulted by validate_rollout_cfg; the embodied HuggingFace rollout never passes it.
    "rollout.sampling_params.repetition_penalty": "passed by RLinf's sglang/vllm rollouts only",
    "algorithm.sampling_params.repetition_penalty": "passed by RLinf's sglang/vllm rollouts only",
}
#: Config keys (or ``prefix.`` subtrees) that only code the generated fidelity test cannot
#: run reads: key → (the RLinf 0.3 file that reads it, why the test does not run it).
READ_ELSEWHERE: dict[str, tuple[str, str]] = {
    "cluster.num_nodes": ("scheduler/cluster/cluster.py", "starts Ray's cluster"),
    "cluster.component_placement.": ("utils/placement.py", "places Ray worker groups"),
    "runner.logger.": ("utils/metric_logger.py", "EmbodiedRunner's logger (Ray groups)"),
    "runner.max_epochs": ("runners/embodied_runner.py", "the loop over Ray worker groups"),
    "runner.max_steps": ("runners/embodied_runner.py", "the loop over Ray worker groups"),
    "runner.save_interval": ("runners/embodied_runner.py", "the loop over Ray worker groups"),
    "runner.resume_dir": ("runners/embodied_runner.py", "the loop over Ray worker groups"),
    "algorithm.entropy_type": (
        "workers/actor/fsdp_actor_worker.py",
        "read by train_micro_batch only with algorithm.entropy_bonus > 0",
    ),
    "env.train.video_cfg.": ("envs/wrappers/record_video.py", "video is off (save_video)"),
    "env.eval.video_cfg.": ("envs/wrappers/record_video.py", "video is off (save_video)"),
}
#: Prompt tokens besides a Qwen-VL prompt's image placeholders: the chat turn, the filled

#: Loader options only a token family's backbone reads (a custom module takes none).
TOKEN_FAMILY_KEYS = ("actor.model.trust_remote_code", "actor.model.attn_implementation")
#: Value-loss settings: read by every actor step but used only by the actor_critic loss.
VALUE_LOSS = ("algorithm.value_clip", "algorithm.huber_delta")
#: Read only with a value head: its learning rate (build_optimizer); and, where envs also
#: auto-reset, how a truncated episode is bootstrapped from its value
#: (compute_bootstrap_rewards).
VALUE_LR, BOOTSTRAP = "actor.optim.value_lr", "algorithm.bootstrap_type"


def exempt_keys(config: dict, family: str) -> tuple[str, ...]:
    """Example keys ``config`` (of a ``family`` policy) leaves out: nothing would read them."""
    exempt = () if FAMILIES[family].token_based else TOKEN_FAMILY_KEYS
    value_head = config["actor"]["model"]["add_value_head"]
    if not value_head:
        exempt += (VALUE_LR,)
    if config["algorithm"]["loss_type"] != "actor_critic":
        exempt += VALUE_LOSS
    if not (value_head and config["env"]["train"]["auto_reset"]):
        exempt += (BOOTSTRAP,)
    return exempt


def read_elsewhere(config: dict) -> dict[str, tuple[str, str]]:
    """The entries of :data:`READ_ELSEWHERE` that name keys ``config`` sets."""
    keys = flat_keys({k: v for k, v in config.items() if k not in ("defaults", "hydra")})
    return {
        name: where
        for name, where in READ_ELSEWHERE.items()
        if any(k == name or (name.endswith(".") and k.startswith(name)) for k in keys)
    }


def layout_problems(config: dict, schema: str, exempt: tuple[str, ...] = ()) -> list[str]:
    """How ``config`` differs from RLinf's example layout: missing keys and wrong types
    (``exempt``: example keys this config leaves out on purpose)."""
    layout = load_schema(schema)["keys"]
    ours = flat_keys({k: v for k, v in config.items() if k not in ("defaults", "hydra")})
    problems = []
    for key, kind in layout.items():
        if any(key.startswith(prefix) for prefix in NOT_MIRRORED) or key in exempt:
            continue
        if key not in ours:
            problems.append(f"{key}: missing (RLinf's examples set a {kind})")
        elif not (ours[key] is None or value_fits(kind, ours[key])):  # None: left unset on purpose
            problems.append(f"{key}: {ours[key]!r} is not a {kind}")
    return problems
