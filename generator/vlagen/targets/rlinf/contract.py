"""RLinf 0.3's and 0.2's env/model contracts, as data (see :mod:`vlagen.contracts`)."""

from __future__ import annotations

from dataclasses import replace

from ...contracts import Contract, Method, Registration, Side

#: RLinf 0.3.0's contract (files under ``rlinf/``): the env side as ``EnvWorker`` builds and
#: drives it (``workers/env/env_worker.py``), the policy side as the HuggingFace rollout
#: (``workers/rollout/hf/huggingface_worker.py``, ``predict``) and the actor
#: (``workers/actor/fsdp_actor_worker.py``) call a model type they do not list, the
#: observation keys ``EnvOutput.prepare_observations`` keeps (``data/embodied_io_struct.py``).
RLINF_0_3_CONTRACT = Contract(
    summary="env class with reset() and chunk_step(actions[N, C, A]); BasePolicy with "
    "predict_action_batch/default_forward",
    env=Side(
        base="duck-typed (no env base class; a gymnasium.Env by convention)",
        methods=(
            Method("__init__", "(*, cfg, num_envs, seed_offset, total_num_processes, worker_info)"),
            Method("reset", "()", "(obs, infos)"),
            Method(
                "chunk_step",
                "(chunk_actions[N, C, A])",
                "(obs_list, rewards[N, C], terminations[N, C], truncations[N, C], infos_list)",
            ),
            Method("update_reset_state_ids", "()"),
            Method("offload", "()", required=False),  # with env.*.enable_offload only
        ),
    ),
    policy=Side(
        base="rlinf.models.embodiment.base_policy.BasePolicy",
        methods=(
            Method(
                "predict_action_batch",
                "(*, env_obs, do_sample, temperature, top_k, top_p, max_new_tokens)",
                "(actions[B, C, A], {prev_logprobs, prev_values, forward_inputs})",
            ),
            Method(
                "default_forward",
                "(*, forward_inputs, compute_logprobs, compute_entropy, compute_values, use_cache)",
                "{logprobs, values, entropy}",
            ),
            # BasePolicy's optional overrides (each raises NotImplementedError by default)
            *(
                Method(name, "(**kwargs)", "", required=False)
                for name in ("sac_forward", "sac_q_forward", "crossq_forward", "crossq_q_forward")
            ),
            Method("iql_forward", "(**kwargs)", "", required=False),
            Method("prepare_dagger_sft_batch", "(batch)", "", required=False),
        ),
    ),
    observation=("main_images", "wrist_images", "extra_view_images", "states", "task_descriptions"),
    registration=Registration(
        env="SupportedEnvType Enum + if/elif get_env_cls, patched at run time (a value added to "
        "the Enum, get_env_cls wrapped); prepare_actions passes unlisted env types through",
        model="rlinf.models.register_model(model_type, builder, category='embodied')",
        hook="RLINF_EXT_MODULE, whose register() load_user_extension_module "
        "(scheduler/cluster/utils.py) calls in every Ray worker, not in the driver",
    ),
    config_snapshot="rlinf_0_3",
)
#: RLinf 0.2: the same env, observation and policy calls; ``BasePolicy`` without 0.3's
#: ``iql_forward`` and ``prepare_dagger_sft_batch``; models a closed Enum
#: (``config.py``) with an if/elif ``get_model`` (``models/__init__.py``); ``prepare_actions``
#: raises ``NotImplementedError`` for env types it does not list (``envs/action_utils.py``).
RLINF_0_2_CONTRACT = replace(
    RLINF_0_3_CONTRACT,
    policy=replace(
        RLINF_0_3_CONTRACT.policy,
        methods=tuple(
            m
            for m in RLINF_0_3_CONTRACT.policy.methods
            if m.name not in ("iql_forward", "prepare_dagger_sft_batch")
        ),
    ),
    registration=Registration(
        env="SupportedEnvType Enum + if/elif get_env_cls and prepare_actions (which raises for "
        "unlisted env types), patched at run time (a value added to the Enum, get_env_cls and "
        "prepare_actions wrapped)",
        model="SupportedModel Enum + if/elif get_model, patched at run time (a value added to "
        "the Enum, get_model wrapped in rlinf.models and the rollout and actor workers)",
        hook="RLINF_EXT_MODULE, whose register() Worker._load_user_extensions "
        "(scheduler/worker/worker.py) calls in every Ray worker, not in the driver",
    ),
    config_snapshot="rlinf_0_2",
)
