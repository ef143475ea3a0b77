"""The faults a run can inject into its measured period (docs/method.md#faults).

- ``broker-restart`` / ``broker-kill``: the embedded broker is stopped (SIGTERM,
  a clean shutdown; or SIGKILL) for ``fault_down_s`` seconds, then started again
  on its own data. Producers and the job's Kafka clients retry meanwhile.
- ``engine-restart``: the job's whole process group is killed (SIGKILL)
  and the job started again from its checkpoint, as a supervisor would.
- a fault of a part of the job, which its engine names and whose process it picks
  (:class:`engines.base.PartLoss`): that process is killed (SIGKILL) while the rest runs
  on (Spark's ``worker-loss``: an executor of a standalone cluster, which the master
  replaces; Kafka Streams' ``instance-loss``: one instance of ``--instances``, whose
  tasks the others take over).

The run decides when (``fault_at_s`` into the measured period) and records the
window each fault leaves in broker time, from which the evaluator measures the
recovery; :mod:`stagebench.run.faults` does the stopping and killing.
"""

from typing import Final

from engines import registry
from engines.base import Engine

BROKER_FAULTS: Final = ("broker-restart", "broker-kill")
FAULTS: Final = BROKER_FAULTS + registry.faults()
"""Every fault: the broker's, then those of an engine's own processes, which the floor
(a plain Kafka loop) cannot have."""


def process(kind: str, engine: Engine) -> str | None:
    """The process group a fault of a run on ``engine`` stops or kills and starts again,
    as the run's resource sampler names it; None for a lost part the sampler does not
    watch (Spark's executor, which the cluster's worker starts)."""
    if kind in BROKER_FAULTS:
        return "broker"
    loss = engine.loss(kind)
    return "engine" if loss is None or loss.sampled else None


def partial(kind: str, engine: Engine) -> bool:
    """The fault stops a part of the job while the rest writes on
    (:class:`evaluator.recovery.windows.Window`)."""
    loss = engine.loss(kind)
    return loss is not None and loss.partial
