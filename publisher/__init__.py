"""The load generator: NDW-style speed and flow observations on an open-loop schedule.

Flow of a run: :mod:`publisher.config` (what to publish, its workload one of
:mod:`publisher.workload`) → :mod:`publisher.sizing` (rate ⇄ locations ⇄ time scale) →
:mod:`publisher.schedule` (when each send is due) → :mod:`publisher.source` (synthetic
data from :mod:`publisher.model`, encoded by :mod:`publisher.codec`; or
:mod:`publisher.replay` of a file, NDW exports read by :mod:`publisher.ndw`; the
faulty-event workload mixes in the malformed values of :mod:`publisher.faulty`) →
:mod:`publisher.producer` (the send loop on confluent-kafka) → :mod:`publisher.summary`
(what the run reports). The bench calls :func:`publisher.producer.publish`, for
``stagebench publish`` and in every run.
"""
