"""The options made from configuration fields: every field a command takes is an option
of the same dest that states its default, and parses to the field's type."""

import argparse
import dataclasses

import pytest

from engines.config import PipelineConfig
from evaluator.config import EvaluatorConfig
from publisher.config import PublisherConfig
from stagebench.cli.options import (
    APPLICATION_FIELDS,
    EVALUATE_FIELDS,
    PIPELINE_TUNING,
    PUBLISH_FIELDS,
    RUN_FIELDS,
)
from stagebench.config.settings import RunConfig
from tests.engines.test_config import subcommand

RUN_RUN_FIELDS = tuple(n for n in RUN_FIELDS if n not in APPLICATION_FIELDS)
"""``run`` takes every [run] key but the shared application's."""


def options(command: str) -> dict[str, argparse.Action]:
    return {action.dest: action for action in subcommand(command)._actions}


@pytest.mark.parametrize(
    ("command", "cls", "names"),
    [("publish", PublisherConfig, PUBLISH_FIELDS), ("run", RunConfig, RUN_RUN_FIELDS),
     ("suite", RunConfig, RUN_FIELDS), ("pipeline", PipelineConfig, PIPELINE_TUNING),
     ("evaluate", EvaluatorConfig, EVALUATE_FIELDS)],
)  # fmt: skip
def test_each_field_is_an_option_with_its_help_and_default(command, cls, names):
    by_dest = options(command)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    for name in names:
        action = by_dest[name]
        assert action.help.startswith(fields[name].metadata["help"].replace("%", "%%")), name
        assert action.help.endswith(")") and "(default: " in action.help, name
        assert action.default is None, name  # left out: the config file's or the class's


def test_a_new_publisher_field_needs_no_edit_of_the_command():
    assert set(PUBLISH_FIELDS) == {f.name for f in dataclasses.fields(PublisherConfig)}


def test_values_parse_to_the_fields_types():
    publish = subcommand("publish")
    args = publish.parse_args(["--ramp-rates", "400,800", "--acks", "1", "--burst-every", "5"])
    assert (args.ramp_rates, args.acks, args.burst_every_s) == ((400.0, 800.0), "1", 5.0)
    run = subcommand("run")
    assert run.parse_args(["--warmup", "auto"]).warmup_s == "auto"
    assert run.parse_args(["--warmup", "30"]).warmup_s == 30.0
    assert run.parse_args(["--results", "out"]).results_dir == "out"
    for bad in (["--ramp-rates", "400,fast"], ["--acks", "2"]):
        with pytest.raises(SystemExit):
            publish.parse_args(bad)


def test_capacity_states_the_probe_defaults_and_keeps_its_own_rate():
    by_dest = options("capacity")
    assert by_dest["duration_s"].help.endswith("(default: 30)")
    assert by_dest["settle_window_s"].help.endswith("(default: 15)")
    assert by_dest["application"].help.endswith("(default: per-run)")
    assert not {"rate", "workload", "fault", "drain_timeout_s"} & by_dest.keys()
