"""The faults a run can inject into its measured period (docs/method.md#faults).

- ``broker-restart`` / ``broker-kill``: the embedded broker is stopped (SIGTERM,
  a clean shutdown; or SIGKILL) for ``fault_down_s`` seconds, then started again
  on its own data. Producers and the job's Kafka clients retry meanwhile.
- ``engine-restart``: the job's whole process group is killed (SIGKILL)
  and the job started again from its checkpoint, as a supervisor would.
- ``worker-loss``: one executor JVM of a standalone cluster is killed (SIGKILL);
  the master starts another and Spark reruns the lost tasks.
- ``instance-loss``: one engine process of a job of several (the newest child of the
  job process: a Kafka Streams instance of ``--instances``) is killed (SIGKILL); the
  others take over its tasks (a rebalance).

The run decides when (``fault_at_s`` into the measured period) and records the
window each fault leaves in broker time, from which the evaluator measures the
recovery; :mod:`stagebench.run.faults` does the stopping and killing.
"""

from typing import Final

FAULTS: Final = (
    "broker-restart", "broker-kill", "engine-restart", "worker-loss", "instance-loss",
)  # fmt: skip
BROKER_FAULTS: Final = ("broker-restart", "broker-kill")
ENGINE_FAULTS: Final = ("engine-restart", "worker-loss", "instance-loss")
"""Faults of an engine's job, which the floor (a plain Kafka loop) cannot have."""
PARTIAL_FAULTS: Final = ("instance-loss",)
"""Faults of a part of the job while the rest writes on (evaluator.recovery.windows.Window)."""


def process(kind: str) -> str | None:
    """The process group a fault stops or kills and starts again, as the run's resource
    sampler names it; None for ``worker-loss``, whose executor is no process the sampler
    watches (the cluster's worker starts it)."""
    if kind in BROKER_FAULTS:
        return "broker"
    return "engine" if kind in ("engine-restart", "instance-loss") else None
