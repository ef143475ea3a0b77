"""The ground floor of stagebench: what every role stands on, importing nothing of ours.

- :mod:`ground.contract` names every field of the input and output messages;
- :mod:`ground.malformed` says what a valid input is, and what kind of malformed one is not;
- :mod:`ground.stages` is the stage table (order, statefulness, windows, updates,
  output identity);
- :mod:`ground.rundir` names every file of a run directory, :mod:`ground.versioned`
  reads its JSON documents back, their schema version checked;
- :mod:`ground.errors` and :mod:`ground.config`: one root exception, typed configs;
- :mod:`ground.files`: documents written whole or not at all, text read with one line
  saying what is wrong;
- :mod:`ground.kafka`: which Kafka, the embedded broker, one-clock topics, the broker clock;
- :mod:`ground.jvm`: Java discovery, pinned jars from Maven Central, heap readings.

``publisher``, ``engines`` and ``evaluator`` import only this package; the
bench (``stagebench``) composes all of them (docs/method.md explains the method).
"""
