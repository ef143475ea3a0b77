"""Your own job as an engine: a command stagebench starts, feeds and stops, and whose
outputs it measures on the broker's clock (docs/own-pipeline.md).

``job`` is the job process that runs the command and watches its topics; ``settings``
is the table ``[engine.command]``. It runs the stage ``job`` (outputs that name the
input they were computed from last), or a stage of the ladder your job implements in
that stage's output format, which turns on that stage's checks.
"""

from engines.base import Engine, Support
from engines.command.settings import CommandSettings

ENGINE = Engine(
    name="command",
    title="your command",
    stages={
        "job": Support(),
        "ingest": Support(),
        "parse": Support(),
        "join": Support(),
        "tumbling": Support(),
        "tumbling-union": Support(),
        "sliding": Support(),
    },
    job="engines.command.job",
    # your job may run on a JVM: the auto warm-up waits as long as for Spark's JIT
    warmup_min_s=240.0,
    settings=CommandSettings,
    carries_inputs=False,  # what the page calls optional, the evaluator fills
)
