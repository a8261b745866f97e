"""siiRL 0.2.0's env/model contract, as data (see :mod:`vlagen.contracts`)."""

from __future__ import annotations

from ...contracts import Contract, Method, Registration, Side
from .layout import SCHEMA

#: siiRL 0.2.0's contract (files under ``siirl/``): the env as ``EmbodiedHFRollout`` builds and
#: drives its ``LIBEROAdapter`` (``engine/rollout/embodied_rollout.py``; the async methods are
#: ``BaseVLAEnvironment``'s abstract ones, ``environment/embodied/base.py``, which nothing
#: calls), the rollout methods the package overrides, and the keys the rollout reads from each
#: env's result dict and, in ``_obs_to_input``, from its ``obs`` (LIBERO's raw layout).
CONTRACT = Contract(
    summary="BaseVLAEnvironment (async reset/step); the rollout calls "
    "_blocking_reset/_blocking_step",
    env=Side(
        base="siirl.environment.embodied.base.BaseVLAEnvironment",
        methods=(
            Method(
                "__init__",
                "(*, env_name, num_envs, max_steps, num_steps_wait, model_family, gpu_ids)",
            ),
            Method("_blocking_reset", "(*, task_ids, trial_ids)", "list[dict] (one per env)"),
            Method(
                "_blocking_step",
                "({actions[B, C, A], indices})",
                "list[dict | None] (one per env; None where not active)",
            ),
            Method("close", "()"),
            Method("reset", "()", "dict", is_async=True),
            Method(
                "step",
                "(action: dict)",
                "(obs, reward, terminated, truncated, info)",
                is_async=True,
            ),
        ),
    ),
    policy=Side(
        base="siirl.engine.rollout.embodied_rollout.EmbodiedHFRollout (the model is siiRL's "
        "own OpenVLA / OpenVLA-OFT)",
        methods=(
            Method("__init__", "(module, config)"),
            Method("_obs_to_input", "(obs)", "dict"),
            Method(
                "process_input",
                "(inputs, task_descriptions)",
                "{input_ids, attention_mask, pixel_values}",
            ),
            Method(
                "_generate_chunk_rollout",
                "(prompts)",
                "TensorDict {responses, input_ids, attention_mask, pixel_values, complete, "
                "finish_step, task_file_name, vjepa_embedding}",
            ),
        ),
    ),
    observation=(
        "obs",
        "task_description",
        "task_file_name",
        "active",
        "complete",
        "finish_step",
        "valid_images",
        "obs.agentview_image",
        "obs.robot0_eye_in_hand_image",
        "obs.robot0_eef_pos",
        "obs.robot0_eef_quat",
        "obs.robot0_gripper_qpos",
    ),
    registration=Registration(
        env="none: EmbodiedHFRollout builds a hard-coded LIBEROAdapter; the module's "
        "LIBEROAdapter and EmbodiedHFRollout are replaced at run time",
        model="none: embodied_type openvla or openvla-oft, hard-coded branches (fsdp_workers, "
        "embodied_rollout, embodied_actor)",
        hook="Ray worker_process_setup_hook, patching siirl.engine.rollout.embodied_rollout when "
        "it is imported",
    ),
    config_snapshot=SCHEMA,
)
