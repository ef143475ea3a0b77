"""The live warm-up watch of a user's job: an output that only names its input is timed
from that input's broker timestamp, once the input has been read."""

from array import array

from stagebench.run.watch import OutputWatcher

NOWHERE = "127.0.0.1:9"
"""No broker: the consumers are created, and their reads return nothing."""


def test_an_output_naming_its_input_is_timed_from_it_once_the_input_is_read():
    watcher = OutputWatcher(NOWHERE, "out", ["speed", "flow"])
    try:
        assert watcher._inputs is not None
        watcher._inputs._times[("speed", 0)] = (10, array("q", [5_000, 5_100, 5_200]))
        watcher._pending = [(5_130, ("speed", 0, 11)), (6_000, ("speed", 0, 13)),
                            (5_250, ("flow", 0, 0))]  # fmt: skip
        # offset 11 is known (30 ms); offset 13 and the flow input are not read yet
        assert watcher._named() == [(5, 30)]
        assert [named for _, named in watcher._pending] == [("speed", 0, 13), ("flow", 0, 0)]
        assert watcher._inputs.at("speed", 0, 9) is None  # before the first read offset
    finally:
        watcher.stop()
