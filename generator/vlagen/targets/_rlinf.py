"""What RLinf 0.2 and 0.3 share: algorithm names and ``validate_embodied_cfg``'s rules."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from ..errors import Issue

if TYPE_CHECKING:
    from ..spec import Spec

RLINF_CONTRACT = (
    "env class with reset() and chunk_step(actions[N, C, A]); BasePolicy with "
    "predict_action_batch/default_forward"
)

# algorithm.adv_type, each with the algorithm.loss_type it pairs with in RLinf's examples.
RLINF_ALGORITHMS = {
    "gae": "algorithm.adv_type=gae, loss_type=actor_critic (PPO; needs a value head)",
    "grpo": "algorithm.adv_type=grpo, loss_type=actor",
    "grpo_dynamic": "algorithm.adv_type=grpo_dynamic, loss_type=actor",
    "reinpp": "algorithm.adv_type=reinpp, loss_type=actor (REINFORCE++)",
}


def rlinf_checks_fn(spec: Spec, index: int) -> Iterator[Issue]:
    """RLinf's own config validation, run at plan time so it fails before a cluster starts."""
    target = spec.targets[index]
    chunk = spec.model.action.chunk
    steps = spec.env.max_episode_steps
    if steps % chunk:
        yield Issue(
            ("env", "max_episode_steps"),
            f"RLinf needs max_episode_steps ({steps}) divisible by the action chunk "
            f"(model.action.chunk = {chunk}) for target {target.framework} {target.version}",
        )
    if target.algorithm.startswith("grpo") and spec.training.group_size < 2:
        yield Issue(
            ("training", "group_size"),
            f"RLinf's {target.algorithm} needs group_size > 1, got {spec.training.group_size}",
        )
    if target.algorithm == "gae" and not spec.model.value_head:
        yield Issue(
            ("model", "value_head"),
            "RLinf's gae (actor_critic loss) needs a value head: set model.value_head: true",
        )


rlinf_checks = (rlinf_checks_fn,)
