"""siiRL 0.2's config as data: the snapshot of its dataclasses every override is checked
against, and the keys only code that needs a GPU cluster reads."""

from __future__ import annotations

from ..common.config_schema import load_schema, lookup, value_fits

SCHEMA = "siirl_0_2"

#: Override keys read only by siiRL code that cannot run on a CPU (its Ray driver, DAG and
#: FSDP workers, data loader, trainer), each with the file (under ``siirl/``) that reads it,
#: and after `` as `` how that file spells the field where it builds the name.
#: The generated fidelity test checks that every other key is read while siiRL's rollout,
#: advantage and actor run, and that each file here names the key's field.
_LOADER = "data_coordinator/dataloader/data_loader_node.py"
_DATASET = "data_coordinator/dataloader/partitioned_dataset.py"
_DAG, _FSDP = "dag_worker/dagworker.py", "engine/fsdp_workers.py"
_CKPT = "dag_worker/checkpoint_manager.py"
_SAMPLING = "user_interface/filter_interface/embodied.py"
READ_ELSEWHERE = {
    "data.dataset_type": _DATASET,
    "data.train_files": _DATASET,
    "data.val_files": _DATASET,
    "data.max_prompt_length": _DATASET,
    "data.train_batch_size": _LOADER,
    "data.val_batch_size": _LOADER,
    "data.max_response_length": _DAG,
    "algorithm.workflow_type": "main_dag.py",
    "algorithm.use_kl_in_reward": _DAG,
    "algorithm.filter_groups.enable": _DAG,
    "algorithm.filter_groups.metric": "user_interface/filter_interface/dapo.py",
    "algorithm.embodied_sampling.filter_accuracy": _SAMPLING,
    "algorithm.embodied_sampling.accuracy_lower_bound": _SAMPLING,
    "algorithm.embodied_sampling.accuracy_upper_bound": _SAMPLING,
    "algorithm.embodied_sampling.filter_truncated": _SAMPLING,
    "dag.custom_pipeline_fn": "main_dag.py",
    "reward_model.reward_manager": "execution/scheduler/reward.py",
    "reward_model.reward_kwargs.action_token_len": "engine/reward_manager/embodied.py",
    "reward_model.reward_kwargs.reward_coef": "engine/reward_manager/embodied.py",
    "actor_rollout_ref.model.path": _FSDP,
    "actor_rollout_ref.model.model_type": _FSDP,
    "actor_rollout_ref.model.trust_remote_code": _FSDP,
    "actor_rollout_ref.model.enable_gradient_checkpointing": _FSDP,
    "actor_rollout_ref.model.lora_rank": _FSDP,
    "actor_rollout_ref.model.lora_alpha": _FSDP,
    "actor_rollout_ref.model.target_modules": _FSDP,
    "actor_rollout_ref.rollout.name": _FSDP,
    "actor_rollout_ref.embodied.num_images_in_input": _FSDP,  # OFT's vision backbone
    "trainer.project_name": _DAG,
    "trainer.experiment_name": _DAG,
    "trainer.logger": _DAG,
    "trainer.val_before_train": _DAG,
    "trainer.save_freq": _DAG,
    "trainer.total_epochs": _DAG,
    "trainer.nnodes": _DAG,
    "trainer.n_gpus_per_node": _DAG,
    "trainer.seed": _LOADER,  # the manifest's shuffle (data.shuffle, on by default)
    "trainer.resume_mode": _CKPT,
    "trainer.default_local_dir": _CKPT,
    # read by role: getattr(config.trainer, f"max_{role_name_for_config}_ckpt_to_keep", 10)
    "trainer.max_actor_ckpt_to_keep": f"{_CKPT} as max_{{role_name_for_config}}_ckpt_to_keep",
}


def override_problems(overrides: list[tuple[str, object]], runtime: list[str]) -> list[str]:
    """Keys siiRL 0.2's dataclasses would silently drop, and values of the wrong type."""
    schema = load_schema(SCHEMA)
    problems = [f"{k} (no such key)" for k in runtime if lookup(schema, k) is None]
    for key, value in overrides:
        kind = lookup(schema, key)
        if kind is None:
            problems.append(f"{key} (no such key)")
        elif not value_fits(kind, value):
            problems.append(f"{key}={value!r} (siiRL expects {kind})")
    return problems
