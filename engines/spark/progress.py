"""Engine progress of a run: StreamingQueryListener events as JSON lines.

Each line is one event: ``{"event": "started"|"progress"|"idle"|"terminated",
"time_ms": <driver wall clock>, ...}``; progress lines carry Spark's whole progress
report (batchId, durationMs, numInputRows, inputRowsPerSecond,
processedRowsPerSecond, stateOperators, observedMetrics with the parse stage's
malformed count, ...).
"""

import json
import logging
import threading
import time
from pathlib import Path
from typing import Any

from pyspark import SparkContext
from pyspark.sql.streaming import StreamingQueryListener
from pyspark.sql.streaming.listener import JStreamingQueryListener

log = logging.getLogger(__name__)


class ProgressWriter(StreamingQueryListener):
    """Appends the listener events of this Spark session to JSON-lines files: every
    event to one file, or (a shared application's) each query's to the file registered
    under its name (:meth:`route`); events of an unregistered query are dropped."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._by_name: dict[str, Path] = {}
        self._by_id: dict[str, Path] = {}
        self._lock = threading.Lock()

    def route(self, query_name: str, path: Path) -> None:
        """Write the events of the query named ``query_name`` to ``path``."""
        with self._lock:
            self._by_name[query_name] = path

    def _target(self, body: dict[str, Any]) -> Path | None:
        if self.path is not None:
            return self.path
        query_id, name = body.get("id"), body.get("name")
        # the started event comes first and names the query; idle and terminated events
        # carry only its id
        if name in self._by_name and query_id:
            self._by_id[query_id] = self._by_name[name]
        return self._by_id.get(query_id) if query_id else None

    def _write(self, event: str, body: dict[str, Any]) -> None:
        line = json.dumps({"event": event, "time_ms": int(time.time() * 1000), **body})
        with self._lock:
            if (path := self._target(body)) is None:
                return
            with path.open("a", encoding="utf-8") as out:
                out.write(line + "\n")

    def onQueryStarted(self, event: Any) -> None:
        self._write(
            "started",
            {
                "id": str(event.id),
                "run_id": str(event.runId),
                "name": event.name,
                "timestamp": event.timestamp,
            },
        )

    def onQueryProgress(self, event: Any) -> None:
        self._write("progress", json.loads(event.progress.json))

    def onQueryIdle(self, event: Any) -> None:
        self._write(
            "idle", {"id": str(event.id), "run_id": str(event.runId), "timestamp": event.timestamp}
        )

    def onQueryTerminated(self, event: Any) -> None:
        self._write(
            "terminated",
            {"id": str(event.id), "run_id": str(event.runId), "exception": event.exception},
        )

    @property
    def _jlistener(self) -> Any:
        """Spark's Java wrapper around :class:`_JsonProgress` instead of PySpark's own.

        PySpark rebuilds every progress report in Python field by field, dozens of Py4J
        calls per micro-batch, each run by Spark's listener thread: on a 2-core machine at
        five micro-batches a second that thread alone kept a third of a core busy.
        """
        if not hasattr(self, "_jlistenerobj"):
            jvm = SparkContext._jvm
            assert jvm is not None, "addListener starts the JVM first"
            self._jlistenerobj = jvm.PythonStreamingQueryListenerWrapper(_JsonProgress(self))
        return self._jlistenerobj


class _JsonProgress(JStreamingQueryListener):
    """Progress events as Spark's own JSON, one Py4J call each; the rare others as PySpark
    converts them."""

    pylistener: ProgressWriter

    def onQueryProgress(self, jevent: Any) -> None:
        self.pylistener._write("progress", json.loads(jevent.progress().json()))
