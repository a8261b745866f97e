"""verl 0.7.1's env/model contract, as data (see :mod:`vlagen.contracts`)."""

from __future__ import annotations

from ...contracts import Contract, Method, Registration, Side
from .layout import SCHEMA

#: verl 0.7.1's contract (files under ``verl/experimental/vla/``): the env as ``EnvManager``
#: builds it in its subprocess and ``EnvWorker`` calls it (``workers/env/``; nothing in 0.7.1
#: calls ``get_all_state_ids`` or ``stop_simulator``, whose protocol holds ``get_state``,
#: ``load_state`` and ``close``), the rollout and actor methods the package overrides
#: (``naive_rollout_rob.py``, ``dp_rob.py``), and the observation keys
#: ``create_env_batch_dataproto`` reads (``workers/env/env_worker.py``).
CONTRACT = Contract(
    summary="gym-style vector env (reset_envs_to_state_ids / chunk_step) behind EnvManager, "
    "selected by env.train.simulator_type",
    env=Side(
        base="duck-typed (a gymnasium.Env by convention), run in a subprocess behind EnvManager",
        methods=(
            Method("__init__", "(cfg, rank, world_size)"),
            Method("reset_envs_to_state_ids", "(state_ids_list, task_ids_list)", "(obs, infos)"),
            Method(
                "chunk_step",
                "(chunk_actions[N, C, A])",
                "(obs, rewards[N, C], terminations[N, C], truncations[N, C], infos)",
            ),
            Method("flush_video", "(*, video_sub_dir)", required=False),  # with save_video
            Method("get_all_state_ids", "()", "state ids", required=False),
            Method("get_state", "()", "bytes", required=False),
            Method("load_state", "(state_buffer)", required=False),
            Method("close", "()", required=False),
        ),
    ),
    policy=Side(
        base="verl.workers.rollout.base.BaseRollout and "
        "verl.experimental.vla.dp_rob.RobDataParallelPPOActor, subclassed",
        methods=(
            Method(
                "generate_sequences",
                "(prompts: DataProto)",
                "DataProto {responses, input_ids, attention_mask, pixel_values, action}",
            ),
            Method("_forward_micro_batch", "(micro_batch, temperature)", "(entropy, log_probs)"),
            Method(
                "_forward_micro_batch_update",
                "(*, input_ids, attention_mask, pixel_values, responses, temperature)",
                "(entropy, log_probs)",
            ),
        ),
    ),
    observation=(
        "images_and_states.full_image",
        "images_and_states.wrist_image",
        "images_and_states.state",
        "task_descriptions",
    ),
    registration=Registration(
        env="if/elif on env.train.simulator_type in EnvWorker.init_worker (libero, isaac); "
        "EnvWorker replaced by a subclass at run time",
        model="HuggingFace Auto classes (register_vla_models: AutoConfig 'openvla', "
        "AutoModelForVision2Seq) in RobActorRolloutRefWorker, replaced by a subclass at run "
        "time that builds the package's policy",
        hook="Ray worker_process_setup_hook (ray_kwargs.ray_init.runtime_env), patching verl's "
        "modules when they are imported",
    ),
    config_snapshot=SCHEMA,
)
