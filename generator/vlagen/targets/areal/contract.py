"""AReaL 1.0.4's contract, as data (see :mod:`vlagen.contracts`)."""

from __future__ import annotations

from ...contracts import Contract, Method, Registration, Side
from .layout import SCHEMA

#: AReaL 1.0.4's contract: no env API (``areal.api.env_api`` was deleted before 1.0), so the
#: env runs inside the workflow; ``RolloutWorkflow`` (``areal/api/workflow_api.py``) returns
#: the trajectory tensor dict the PPO actor trains on; the model is whatever AReaL's engines
#: load (``areal/engine/core/model.py``).
CONTRACT = Contract(
    summary="RolloutWorkflow.arun_episode(engine, data) (async), one row per decision",
    env=Side(base="none: AReaL has no env API; the workflow drives the package's env"),
    policy=Side(
        base="areal.api.workflow_api.RolloutWorkflow",
        methods=(
            Method(
                "arun_episode",
                "(engine: InferenceEngine, data: dict)",
                "{input_ids, attention_mask, loss_mask, logprobs, versions, rewards, "
                "multi_modal_input} | None",
                is_async=True,
            ),
        ),
    ),
    observation=(),
    registration=Registration(
        env="none (the env runs inside the workflow)",
        model="none: a causal LM or a VALID_VISION_MODELS model (Qwen-VL) AReaL's FSDP engine "
        "and SGLang/vLLM load, served through engine.agenerate(ModelRequest)",
        hook="PPOTrainer.train(workflow=<dotted path of the workflow class>, workflow_kwargs)",
    ),
    config_snapshot=SCHEMA,
)
