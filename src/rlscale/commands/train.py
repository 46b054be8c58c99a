"""``rlscale train``: train one policy on procedurally generated gridworlds or cue corridors.

Prints the held-out success (exact, on environments never seen in training)
next to the untrained and the optimal policy's, the environment steps and the
data cost; ``--json FILE`` writes the full result.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from rlscale.theory._axes import SWEEP_AXES

#: The axes' flags (E, t, k and the context c) come from the one axis vocabulary
#: (rlscale.theory._axes).
_AXIS_OPTIONS = (
    *((axis.flag, axis.field, int, axis.description) for axis in SWEEP_AXES),
    ("--seed", "seed", int, "random seed (same seed, bit-identical run)"),
    ("--steps", "steps", int, "number of updates (default: epochs passes over the tasks)"),
    ("--epochs", "epochs", int, "passes over the E·t tasks (default 4)"),
    ("--lr", "lr", float, "Adam learning rate (default 0.05)"),
    ("--defect-rate", "defect_rate", float,
     "fraction of synthetic environments corrupted (unsolvable or reward-leaking)"),
)


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "train",
        help="train a policy on generated gridworlds and evaluate it on unseen ones",
        description="Train a shared policy on E environments × t tasks × k trajectories of "
        "a procedurally generated FrozenLake-like family; report the exact success on "
        "held-out environments.",
    )
    for flag, dest, typ, text in _AXIS_OPTIONS:
        parser.add_argument(flag, dest=dest, type=typ, default=None, help=text)
    parser.add_argument("--algorithm", default=None,
                        help="reinforce, rloo, grpo (default), dr_grpo, rlds or cope (GRPO "
                        "plus forecast heads on the policy's backbone)")
    parser.add_argument("--policy", default=None,
                        help="linear, mlp, backbone or linear_backbone (default: linear for a "
                        "gridworld at context 1, backbone otherwise)")
    parser.add_argument("--env", default=None,
                        help="grid (default) or memory (cue corridors: the answer needs the "
                        "first observation)")
    parser.add_argument("--forecast-weight", dest="forecast_weight", type=float, default=None,
                        help="cope: weight of the forecast loss (default 0.5)")
    parser.add_argument("--forecast-horizon", dest="forecast_horizon", type=int, default=None,
                        help="cope: actions forecast ahead, one head each (default 4)")
    parser.add_argument("--frontier", nargs=2, type=float, metavar=("LOW", "HIGH"),
                        default=None, help="train on tasks whose pass rate is in [LOW, HIGH]")
    parser.add_argument("--verify", action="store_true", default=None,
                        help="filter synthetic environments with the verifier")
    parser.add_argument("--set", dest="settings", action="append", default=[],
                        metavar="FIELD=VALUE",
                        help="any other TrainConfig field, e.g. --set grid_size=8 (repeatable)")
    parser.add_argument("--json", metavar="FILE", help="write the full result as JSON")
    parser.add_argument("--curve", metavar="FILE.csv",
                        help="write held-out success against compute during training "
                        "(columns update, env_steps, rollouts, success) for "
                        "'rlscale fit --law sigmoid'")
    parser.add_argument("--eval-every", type=int, default=None, metavar="N",
                        help="with --curve: evaluate every N updates (default: updates // 30, so "
                        "at least 30 points, and the last, once there are 30 updates)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(func=_train)


def parse_setting(text: str, types: dict[str, Any]) -> tuple[str, Any]:
    """``FIELD=VALUE`` with VALUE parsed as the field's type (no evaluation of code)."""
    if "=" not in text:
        raise ValueError(f"--set expects FIELD=VALUE; got {text!r}")
    name, raw = (part.strip() for part in text.split("=", 1))
    if name not in types:
        raise ValueError(f"--set: unknown field {name!r}; valid: {', '.join(sorted(types))}")
    kind = str(types[name])
    if raw.lower() in ("none", "null") and "None" in kind:
        return name, None
    try:
        if kind.startswith("bool"):
            if raw.lower() not in ("true", "false", "1", "0"):
                raise ValueError(raw)
            return name, raw.lower() in ("true", "1")
        if kind.startswith("int"):
            return name, int(raw)
        if kind.startswith("float"):
            return name, float(raw)
        if kind.startswith("tuple"):
            return name, tuple(float(x) for x in raw.split(","))
    except ValueError:
        raise ValueError(f"--set {name}: cannot read {raw!r} as {kind}") from None
    return name, raw


def _train(args: argparse.Namespace) -> int:
    from dataclasses import fields

    from rlscale.simulate import TrainConfig, train

    values: dict[str, Any] = {}
    types = {f.name: f.type for f in fields(TrainConfig)}
    for text in args.settings:
        name, value = parse_setting(text, types)
        values[name] = value
    for _, dest, _, _ in _AXIS_OPTIONS:
        if getattr(args, dest) is not None:
            values[dest] = getattr(args, dest)
    for dest in ("algorithm", "policy", "env", "forecast_weight", "forecast_horizon",
                 "frontier", "verify"):
        if getattr(args, dest) is not None:
            values[dest] = getattr(args, dest)
    if args.eval_every is not None:
        values["eval_every"] = args.eval_every
    config = TrainConfig.from_dict(values)
    if args.curve and config.eval_every is None:
        import math
        from dataclasses import replace

        updates = config.steps or math.ceil(config.epochs * config.tasks
                                            / min(config.tasks_per_step, config.tasks))
        config = replace(config, eval_every=max(1, updates // 30))
    res = train(config, progress=not args.no_progress)
    c = res.config
    window = f", context {c.context}" if c.windowed else ""
    print(f"trained {c.algorithm} ({c.policy}{window}) on {c.env} E={c.n_environments} "
          f"environments × t={c.tasks_per_environment} tasks × k={c.trajectories_per_task} "
          f"trajectories, seed {c.seed}")
    how = (f"Monte Carlo, {c.eval_episodes} episodes each" if c.windowed else "exact")
    best = "reference" if c.env == "memory" else "optimal"
    print(f"held-out success  {res.success:.4f}   (untrained {res.untrained_success:.4f}, "
          f"{best} {res.optimal_success:.4f}; {c.eval_environments} unseen environments × "
          f"{c.eval_tasks_per_environment} tasks, {how})")
    print(f"updates {res.updates}   rollouts {res.rollouts}   env steps {res.env_steps}   "
          f"cost {c.cost:g}   zero-advantage groups {res.zero_advantage_fraction.mean():.3f}   "
          f"{res.seconds:.2f} s")
    if res.forecast_loss.size:
        print(f"forecast loss (mean cross-entropy of {c.algorithm_config().forecast_horizon} "
              f"heads) {res.forecast_loss[0]:.4f} → {res.forecast_loss[-1]:.4f}; the heads are "
              "not used to act")
    if c.verify:
        print(f"verifier kept {res.environments_kept} of {c.n_environments} environments")
    if args.curve:
        from rlscale.files._atomic import write_text_atomic

        lines = ["update,env_steps,rollouts,success"]
        lines += [f"{int(u)},{int(e)},{int(r)},{s!r}" for u, e, r, s in res.curve.tolist()]
        write_text_atomic(args.curve, "\n".join(lines) + "\n")
        print(f"wrote {args.curve} ({len(res.curve)} points)", file=sys.stderr)
    if args.json:
        from rlscale.files._atomic import write_json_atomic

        write_json_atomic(args.json, res)
        print(f"wrote {args.json}", file=sys.stderr)
    return 0
