"""The node chains of siiRL's DAG the plan lays out, per algorithm."""

from __future__ import annotations

from dataclasses import dataclass

DAG_WORKER = "siirl.dag_worker.dagworker:DAGWorker"


@dataclass(frozen=True)
class PipelineNode:
    node_id: str
    func: str  #: ``module:Class.method`` or ``module.function``; ``@shape`` = our node
    node_type: str  #: a ``NodeType`` member name
    node_role: str  #: a ``NodeRole`` member name
    only_forward_compute: bool = False


def chain(algorithm: str) -> tuple[PipelineNode, ...]:
    """The node chain per algorithm: siiRL's built-in chains with the reward node ours, and
    without their ``reference_log_prob`` node: KL is off (``use_kl_in_reward`` False, no
    ``use_kl_loss``), the embodied actor selects no ``ref_log_prob``
    (``engine/actor/embodied_actor.py``), and with LoRA the reference worker's
    ``compute_ref_log_prob`` calls ``compute_log_prob``, which asserts ``_is_actor``
    (``engine/fsdp_workers.py``), while ``DAGWorker.compute_ref_log_prob`` reads a
    ``metrics`` key that path never returns (``dag_worker/dagworker.py``)."""
    rollout = PipelineNode("rollout_actor", f"{DAG_WORKER}.generate", "MODEL_INFERENCE", "ROLLOUT")
    shape = PipelineNode("shape_reward", "@shape", "COMPUTE", "REWARD")
    tail = (
        PipelineNode(
            "calculate_advantages", f"{DAG_WORKER}.compute_advantage", "COMPUTE", "ADVANTAGE"
        ),
        PipelineNode(
            "actor_old_log_prob",
            f"{DAG_WORKER}.compute_old_log_prob",
            "MODEL_TRAIN",
            "ACTOR",
            only_forward_compute=True,
        ),
        PipelineNode("actor_train", f"{DAG_WORKER}.train_actor", "MODEL_TRAIN", "ACTOR"),
    )
    if algorithm == "srpo":
        sampling = PipelineNode(
            "embodied_sampling",
            "siirl.user_interface.filter_interface.embodied.embodied_local_rank_sampling",
            "COMPUTE",
            "DYNAMIC_SAMPLING",
        )
        reward = PipelineNode("compute_reward", f"{DAG_WORKER}.compute_reward", "COMPUTE", "REWARD")
        shape = PipelineNode("shape_reward", "@shape", "COMPUTE", "DEFAULT")
        return (rollout, sampling, reward, shape, *tail)
    if algorithm == "dapo":
        sampling = PipelineNode(
            "dynamic_sampling",
            "siirl.user_interface.filter_interface.dapo.dynamic_sampling",
            "COMPUTE",
            "DYNAMIC_SAMPLING",
        )
        return (rollout, shape, sampling, *tail)
    if algorithm == "gae":
        value = PipelineNode(
            "compute_value",
            f"{DAG_WORKER}.compute_value",
            "MODEL_TRAIN",
            "CRITIC",
            only_forward_compute=True,
        )
        critic = PipelineNode("critic_train", f"{DAG_WORKER}.train_critic", "MODEL_TRAIN", "CRITIC")
        return (rollout, shape, value, *tail, critic)
    return (rollout, shape, *tail)
