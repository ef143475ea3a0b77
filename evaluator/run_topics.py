"""Reading a run's topics for the pandas engine: the clock rule checked first, then the
output topic and the input topics, from the run's start or from their beginning.

:func:`check_clock` refuses topics that break the clock rule (CreateTime, several
leaders, leaders that changed during the run; docs/method.md#clock); the outputs and
the inputs are read with :func:`evaluator.topics.reader.read_topic`, and a record not stamped
with LogAppendTime is refused.
"""

import pandas as pd

from evaluator.config import EvaluatorConfig
from evaluator.model.run_info import RunInfo
from evaluator.outputs import expected as exp
from evaluator.topics import output_fields, reader
from evaluator.topics.reader import TIMESTAMP_TYPE, check_log_append_time
from ground import contract as s
from ground.errors import EvaluationError
from ground.kafka.topics import check_topics
from ground.stages import stage


def check_clock(bootstrap: str, run: RunInfo) -> None:
    """Refuse to measure when the run's timestamps may come from two clocks (docs/method.md#clock).

    TopicError when a topic is CreateTime or its partitions have different
    leaders now; EvaluationError when the run recorded different leaders before
    and after it (``run.metadata["leaders"]``).
    """

    leaders = run.metadata.get("leaders") or {}
    if "before" in leaders and "after" in leaders and leaders["before"] != leaders["after"]:
        raise EvaluationError(
            f"partition leaders changed during the run (before: {leaders['before']}, "
            f"after: {leaders['after']}); timestamps may come from two broker clocks, "
            "refusing to measure"
        )
    check_topics(bootstrap, [run.output_topic, *run.input_topics])


def read_from_ms(run: RunInfo, config: EvaluatorConfig) -> int | None:
    """Where reading the topics starts, broker time; None: at their beginning.

    ``config.read_before_s`` before the run's marked start, when the stage writes one
    output per input (an output's inputs are then read whenever the output is: it is
    stamped after them) and the run has no disturbance (whose recovery baseline may
    reach further back). A join, a window or a user's job (which may be either, and whose
    outputs' input times come from the inputs) needs inputs from before its outputs, so
    those read whole topics. At a capacity probe's
    rates, reading the whole topics would take about as long as the probe itself.
    """
    if (
        config.read_before_s is None
        or run.start_ms is None
        or run.disturbances
        or stage(run.stage).stateful
        or stage(run.stage).own
        or not run.carries_inputs
    ):
        return None
    return run.start_ms - round(config.read_before_s * 1000)


def read_outputs(
    bootstrap: str, run: RunInfo, config: EvaluatorConfig, from_ms: int | None = None
) -> pd.DataFrame:
    """The output topic (from ``from_ms``), refusing records not stamped by the broker
    (docs/method.md#clock)."""
    parser = reader.lenient_line_parser if stage(run.stage).raw else reader.strict_line_parser
    frame = reader.read_topic(
        bootstrap,
        run.output_topic,
        output_fields.output_schema(run.stage),
        parser,
        config.batch_size,
        config.idle_timeout_s,
        from_ms=from_ms,
    )
    check_log_append_time(run.output_topic, frame[TIMESTAMP_TYPE].to_numpy())
    return frame


def read_inputs(
    bootstrap: str, run: RunInfo, config: EvaluatorConfig, from_ms: int | None = None
) -> pd.DataFrame | None:
    """All input topics (from ``from_ms``) in one frame (None when the run names none); a
    raw stage's inputs parsed only for their ``scheduled_ts``."""
    if not run.input_topics:
        return None
    parse = not stage(run.stage).raw
    frames = []
    for topic in run.input_topics:
        frame = reader.read_topic(
            bootstrap,
            topic,
            output_fields.INPUT_SCHEMA if parse else output_fields.SCHEDULE_SCHEMA,
            exp.input_line_parser if parse else reader.lenient_line_parser,
            config.batch_size,
            config.idle_timeout_s,
            unexpected_fields="error" if parse else "ignore",
            required_only=exp.CHECKED_ONLY if parse else (),
            classify=exp.input_kinds if parse else None,
            from_ms=from_ms,
        )
        check_log_append_time(topic, frame[TIMESTAMP_TYPE].to_numpy())
        frames.append(frame)
    cats = (reader.TOPIC, s.LOCATION_ID)
    return pd.concat(exp.unify_categories(frames, cats), ignore_index=True)
