"""The learning run fails when training is broken: each mutation (a flipped advantage sign, a
loss that reads each token's logits one place off, a frozen adapter, steps too small to
move the policy) makes ``python -m <pkg>.learn`` exit 1, and the unmutated run, side by
side, passes.

bfloat16's rounding itself is ``vlagen``'s check (``tests/test_updates.py``): at the tiny
model's size no rate both trains it in float32 and is rounded away in bfloat16, since its
LoRA B matrices start at zero, where every step is representable.

The mutations are keyed by framework, each run on its golden (:data:`GOLDEN`). Each of the
four fails a run, and each lands in each framework's own code where it can: the advantage's
sign flipped in each framework's own estimator (all four frameworks); the loss's mask one
token late where each loss reads it (RLinf's through the package's ``Policy.evaluate``,
which verl's actor calls too; siiRL's own policy loss; AReaL's: see
:data:`AREAL_MUTATIONS`); the trained weights frozen (RLinf's LoRA adapters; verl's AdamW
handed zero gradients, the optimizer siiRL's actor steps too); and, for RLinf's bfloat16
adapters, steps too small to move the policy (see :data:`COMMON_MUTATIONS` for the others).
RLinf 0.3's own loop runs the LIBERO example's (OpenVLA-OFT with LoRA r32 in bfloat16,
GRPO), verl 0.7.1's ``RobRayPPOTrainer.fit`` the PushT example's (OpenVLA-OFT, bfloat16,
GRPO), AReaL 1.0's ``PPOTrainer.train`` the portable highway example's (Qwen2.5-VL in
bfloat16, GRPO) and siiRL 0.2's ``DAGWorker.execute_task_graph`` the highway OpenVLA
example's (GRPO). The unmutated runs, side by side: AReaL's ``control`` here, at this
test's updates; RLinf's, siiRL's and verl's are the README test's learning runs of these
goldens, at this test's updates (:data:`UPDATES`), both quarters: RLinf's LIBERO run (p =
4.2e-5 top, 1.8e-4 bottom), verl's PushT run (top; bottom 0.35 to 0.79, p = 1.4e-5) and
siiRL's highway run (0.21 to 0.83 top, p = 4.4e-10; 0.31 to 0.75 bottom, p = 1.7e-5).
AReaL's run, the costliest (its actor projects every row onto Qwen's 151,936-token
vocabulary), takes the advantage's sign here; its frozen-weights mutation (AdamW handed
zero gradients, as verl's here) failed at 16 updates as intended when it ran, and leaves
the suite for its time; its loss mask one token late is not told from learning at a size
this suite can run (see :data:`AREAL_MUTATIONS`). Each mutation is put in place by a
bootstrap script in the run's own process, then the package's ``learn.main`` runs as the
command does.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from conftest import GOLDENS, preloaded_python

RLINF_GOLDEN = "libero_openvla_oft"  #: the golden, and its package, RLinf's mutations run on
VERL_GOLDEN = "pusht_openvla_oft"  #: the golden, and its package, verl's mutations run on
AREAL_GOLDEN = "highway_qwen_portable"  #: the golden AReaL's mutations run on
SIIRL_GOLDEN = "highway_openvla"  #: the golden siiRL's mutations run on (its quickest)
#: framework → the golden its mutations run on, and that golden's package
GOLDEN = {
    "rlinf": (RLINF_GOLDEN, "libero_openvla_oft"),
    "verl": (VERL_GOLDEN, "pusht_openvla_oft"),
    "areal": (AREAL_GOLDEN, "highway_portable"),
    "siirl": (SIIRL_GOLDEN, "highway_openvla"),
}
#: Updates of each run here, and of the unmutated runs side by side with them (the README
#: test's learning runs of :data:`GOLDEN`'s goldens). RLinf's, siiRL's and verl's runs are
#: deterministic at fixed seeds (the same output twice), so a control that passes here
#: passes each time.
UPDATES = "12"
#: framework → its runs' updates where not :data:`UPDATES`: AReaL's control, at 12, failed
#: 1 run in 4 (first 3 updates 0.47, last 3 0.77: p = 0.0011); at 16 four of four passed,
#: p = 1.4e-5 at worst
FRAMEWORK_UPDATES = {"areal": "16"}

pytestmark = pytest.mark.slow

#: RLinf's mutation → the code that makes it, run before the learning run in its process
RLINF_MUTATIONS = {
    "advantage_sign": """
        registry = importlib.import_module("rlinf.algorithms.registry").ADV_REGISTRY

        def flipped(function):
            def advantages(*args, **kwargs):
                out = function(*args, **kwargs)
                return (-out[0], *out[1:])

            return advantages

        for name, function in list(registry.items()):
            registry[name] = flipped(function)
    """,
    "loss_mask_one_token_off": """
        import torch

        policy = importlib.import_module(f"{PACKAGE}.model.policy").Policy
        evaluate = policy.evaluate

        def shifted(self, *args, **kwargs):
            log_probs, entropy, values = evaluate(self, *args, **kwargs)
            if torch.is_grad_enabled():  # the loss's mask starts one token late: the first
                # action token (the one the task judges) is scored but never trained
                log_probs = torch.cat([log_probs[:, :1].detach(), log_probs[:, 1:]], dim=1)
            return log_probs, entropy, values

        policy.evaluate = shifted
    """,
    "frozen_adapter": """
        import torch

        policy = importlib.import_module(f"{PACKAGE}.targets.rlinf.policy")
        load = policy.load_policy

        def frozen(*args, **kwargs):
            model = load(*args, **kwargs)
            for name, weight in model.named_parameters():
                if "lora_" in name:
                    weight.register_hook(torch.zeros_like)
            return model

        policy.load_policy = frozen
    """,
    "steps_too_small": "ARGS += ['--lr', '1e-7']",
}

#: A mutation any framework's run takes: an optimizer that sees every gradient as zero (a
#: frozen model). The generated configs decay no weights, so AdamW moves none and the
#: verdict's first check (no trainable tensor changed) fails the run before its Fisher tests
#: do; the advantage's sign and the loss's mask are the mutations that reach those. Steps
#: too small (RLinf's mutation, whose LoRA adapters are bfloat16) are left out where the
#: trainable weights are float32 (verl's, siiRL's and AReaL's master weights), where no step
#: is rounded away. (At ``--lr 1e-7`` each of them fails, as measured when it ran here; the
#: suite's time went to the others.)
#: AReaL's run leaves this one out too (see the module docstring).
COMMON_MUTATIONS = {
    "frozen_weights": """
        import torch

        step = torch.optim.AdamW.step

        def frozen(self, *args, **kwargs):
            for group in self.param_groups:
                for weight in group["params"]:
                    if weight.grad is not None:
                        weight.grad.zero_()
            return step(self, *args, **kwargs)

        torch.optim.AdamW.step = frozen
    """,
}

#: mutation → the code that makes it, run before verl's learning run in its process (verl's
#: VLA code is in no wheel: its source first, from ``VERL_SRC``). Its loss's mask one token
#: late is RLinf's mutation, on the same code: verl's actor scores through the package's
#: ``Policy.evaluate`` too, and the verdict is the package's; RLinf's run shows it fails.
VERL_MUTATIONS = {
    "advantage_sign": """
        importlib.import_module(f"{PACKAGE}.targets.verl.source").use_source()
        core_algos = importlib.import_module("verl.trainer.ppo.core_algos")

        def flipped(function):
            def advantages(*args, **kwargs):
                out = function(*args, **kwargs)
                return (-out[0], *out[1:])

            return advantages

        # compute_advantage calls GRPO's by the module's name, the others from the registry
        grpo = core_algos.compute_grpo_outcome_advantage
        core_algos.compute_grpo_outcome_advantage = flipped(grpo)
        registry = core_algos.ADV_ESTIMATOR_REGISTRY
        for name, function in list(registry.items()):
            registry[name] = flipped(function)
    """,
    **COMMON_MUTATIONS,
}

#: AReaL's mutation → the code that makes it: its own advantage code
#: (``PPOActor._compute_advantages``, which ``PPOTrainer.train`` calls), its sign flipped.
#: The loss mask one token late (the workflow's ``loss_mask`` shifted) is not here: on
#: AReaL's tiny Qwen the first control drifts with the trained second one, toward the bottom
#: quarter whichever is aimed at, and at 12 or 16 updates neither quarter tells it from the
#: unmutated run. Bottom: the mutated run passed 4 of 7 times at 16 updates (0.14 to 0.42,
#: p = 3.5e-4), the unmutated one every time. Top: the mutated run failed 6 of 6 times (once
#: rising, 0.48 to 0.77, p = 0.003 at 12 updates), but so did the unmutated one 3 of 4 times
#: at 16 (it learns within the verdict's first window: 9 of 16 at its first update, p = 0.01).
#: The package's tests check that mask directly: the workflow's rows mark exactly the action
#: tokens (``test_areals_rollout_loop_runs_the_workflow_and_accepts_its_trajectories``) and
#: AReaL's actor scores them as the policy does (the parity test).
AREAL_MUTATIONS = {
    "control": "",
    "advantage_sign": """
        actor = importlib.import_module("areal.trainer.ppo.actor").PPOActor
        compute = actor._compute_advantages

        def flipped(self, data):
            out = compute(self, data)
            out["advantages"] = -out["advantages"]
            return out

        actor._compute_advantages = flipped
    """,
}

#: siiRL's mutation → the code that makes it: its own GRPO estimator, flipped; its own
#: policy loss (``compute_policy_loss_vanilla``, which its embodied actor calls) handed the
#: response mask one token late. Its weights frozen (AdamW handed zero gradients) is verl's
#: mutation, on torch's AdamW, which siiRL's actor steps too, judged by the package's verdict:
#: verl's run shows it fails (siiRL's fails too, measured by hand: 0.19 to 0.23 at 12 updates,
#: p = 0.4, none of its 73 trainable tensors changed).
SIIRL_MUTATIONS = {
    "advantage_sign": """
        core_algos = importlib.import_module("siirl.dag_worker.core_algos")
        grpo = core_algos.compute_grpo_outcome_advantage

        def flipped(*args, **kwargs):
            advantages, returns = grpo(*args, **kwargs)
            return -advantages, returns

        core_algos.compute_grpo_outcome_advantage = flipped
    """,
    "loss_mask_one_token_off": """
        import torch

        core_algos = importlib.import_module("siirl.dag_worker.core_algos")
        loss = core_algos.compute_policy_loss_vanilla

        def late(*args, response_mask, **kwargs):
            mask = torch.cat([torch.zeros_like(response_mask[:, :1]), response_mask[:, :-1]], 1)
            return loss(*args, response_mask=mask, **kwargs)

        core_algos.compute_policy_loss_vanilla = late
    """,
}
#: framework → its mutations
MUTATIONS = {
    "rlinf": RLINF_MUTATIONS,
    "verl": VERL_MUTATIONS,
    "areal": AREAL_MUTATIONS,
    "siirl": SIIRL_MUTATIONS,
}


#: The mutations that break learning in either direction: one quarter's run shows it (the
#: controls, the README test's, run both quarters; AReaL's, here, one: see
#: :data:`QUARTER`). That a run which drifts into one quarter fails the other is the
#: package's test of the aim
#: (``test_an_env_kept_from_one_run_to_the_next_follows_each_runs_aim``) and the verdict's.
#: The loss mask one token late is not one of them: the rest of the action is still trained,
#: and a tiny checkpoint scores every action token through one output layer from near-alike
#: hidden states, so the first control's distribution can move with the second's into the
#: aimed quarter (AReaL's did: :data:`AREAL_MUTATIONS`). It runs both quarters, the verdict
#: users see, where the unmutated run passes both at this test's updates.
ONE_QUARTER = {"advantage_sign", "frozen_adapter", "frozen_weights", "steps_too_small"}


#: framework → the quarter its one-quarter runs aim at: where its tiny policy starts near
#: chance. AReaL's tiny Qwen draws the top quarter 0.28 of the time and the bottom 0.25 (400
#: samples from its first weights), but AReaL learns within the first updates of the
#: verdict's window, so a run whose first batches draw well above chance there fails:
#: its seeded top run at 16 updates starts at 9 of 16 and falls short (p = 0.01), its bottom
#: one passes (0.41 to 0.83, p = 4e-6 at 12 updates), though not always
#: (:data:`FRAMEWORK_UPDATES`). AReaL's control runs that quarter alone: its two-quarter run
#: needs 24 updates, some 4 minutes of CPU, more than this suite can give it.
QUARTER = {"rlinf": "top", "verl": "top", "siirl": "top", "areal": "bottom"}


def run(framework: str, mutation: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """``python -m <pkg>.learn`` on ``framework``'s golden with ``mutation`` in place, in a fork
    of the suite's preloaded Python (torch and transformers imported once: some 9 s a run)."""
    golden, package = GOLDEN[framework]
    updates = FRAMEWORK_UPDATES.get(framework, UPDATES)
    one = mutation in ONE_QUARTER or (framework, mutation) == ("areal", "control")
    quarter = f"ARGS += ['--quarter', {QUARTER[framework]!r}]\n" if one else ""
    script = (
        "import importlib, sys\n"
        f"PACKAGE = {package!r}\n"
        f"ARGS = ['--target', {framework!r}, '--updates', {updates!r}, "
        f"'--out', {str(tmp_path)!r}]\n"
        + quarter
        + textwrap.dedent(MUTATIONS[framework][mutation])
        + "\nif __name__ == '__main__':\n"
        + "    sys.exit(importlib.import_module(f'{PACKAGE}.learn').main(ARGS))\n"
    )
    env = {
        **os.environ,
        "PYTHONPATH": str(GOLDENS / golden / "src"),
        "HOME": str(tmp_path),
        "OMP_NUM_THREADS": "1",  # one per xdist worker, as the preloaded Python has
    }
    return subprocess.run(
        [str(preloaded_python()), "-c", script],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


CASES = [
    pytest.param(framework, mutation, id=f"{framework}-{mutation}")
    for framework, mutations in MUTATIONS.items()
    for mutation in mutations
]


@pytest.mark.parametrize(("framework", "mutation"), CASES)
def test_the_learning_run_fails_under_each_mutation(
    framework: str, mutation: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if framework == "verl":
        request.getfixturevalue("verl_src")  # VERL_SRC for the run, or skip
    elif importlib.util.find_spec(framework) is None:
        pytest.skip(f"needs {framework}")
    done = run(framework, mutation, tmp_path)
    report = done.stdout + done.stderr[-3000:]
    if mutation == "control":
        assert done.returncode == 0 and "learned" in done.stdout, report
    else:
        assert done.returncode == 1 and "DID NOT LEARN" in done.stdout, report
    assert (tmp_path / f"learning-{framework}.png").is_file()
