"""JVM heap in use and garbage-collection time, read from the JVM's own performance-counter
file.

Every HotSpot JVM publishes its counters in ``/tmp/hsperfdata_<user>/<pid>``
(the file ``jstat`` reads). Parsing it costs microseconds and starts no
process, so the resource sampler can read the heap of the Spark and Kafka
JVMs every second without loading a 2-core machine.

A JVM in a container writes the file in the container's ``/tmp``, under its
pid inside the container's pid namespace and its user there; this machine
reaches it through ``/proc/<pid>/root`` (as root, or as the container's owner).
"""

import getpass
import re
import struct
import tempfile
from dataclasses import dataclass
from pathlib import Path

MAGIC = 0xCAFEC0C0
PROLOGUE = struct.Struct(">IbbbbiiqII")  # magic is big-endian; the rest follows byte_order
_USED = re.compile(r"sun\.gc\.generation\.\d+\.space\.\d+\.used")
_GC_TICKS = re.compile(r"sun\.gc\.collector\.\d+\.time")
_TICKS_PER_S = "sun.os.hrt.frequency"


@dataclass(frozen=True)
class JvmCounters:
    """What one JVM's counter file says of its memory and its collectors."""

    heap_used: int
    """Bytes in use across all heap spaces (what jstat sums)."""
    gc_s: float | None
    """Seconds the collectors have run since the JVM started (jstat's GCT: the young and
    full collections' pauses, and G1's remark and cleanup pauses)."""


def perf_file(pid: int) -> Path:
    return Path(tempfile.gettempdir()) / f"hsperfdata_{getpass.getuser()}" / str(pid)


def container_perf_file(pid: int) -> Path | None:
    """The counter file of a JVM in another pid namespace (a container), if it exists."""
    proc = Path("/proc") / str(pid)
    try:
        status = (proc / "status").read_text()
    except OSError:
        return None
    nspids = next(
        (line.split()[1:] for line in status.splitlines() if line.startswith("NSpid:")), []
    )
    if len(nspids) < 2:  # in this machine's namespace: perf_file is the place
        return None
    return next((proc / "root" / "tmp").glob(f"hsperfdata_*/{nspids[-1]}"), None)


def read_counters(data: bytes) -> dict[str, int]:
    """Every long counter (type ``J``) of a hsperfdata buffer, by name."""
    if len(data) < PROLOGUE.size or struct.unpack_from(">I", data)[0] != MAGIC:
        raise ValueError("not a hsperfdata buffer")
    order = "<" if data[4] == 1 else ">"
    header = struct.Struct(order + "IbbbbiiqII")
    *_, entry_offset, num_entries = header.unpack_from(data)
    entry = struct.Struct(order + "iiibbbbi")
    counters: dict[str, int] = {}
    offset = entry_offset
    for _ in range(num_entries):
        length, name_off, vector_len, dtype, _f, _u, _v, data_off = entry.unpack_from(data, offset)
        if length <= 0:
            break
        if dtype == ord("J") and vector_len == 0:
            name_end = data.index(b"\0", offset + name_off)
            name = data[offset + name_off : name_end].decode("ascii", "replace")
            counters[name] = struct.unpack_from(order + "q", data, offset + data_off)[0]
        offset += length
    return counters


def jvm_counters(pid: int) -> JvmCounters | None:
    """The heap in use and the collectors' time of the JVM ``pid``, None if unavailable."""
    try:
        path = perf_file(pid)
        if not path.exists():
            path = container_perf_file(pid) or path
        counters = read_counters(path.read_bytes())
    except (OSError, ValueError, struct.error):
        return None
    return from_counters(counters)


def from_counters(counters: dict[str, int]) -> JvmCounters | None:
    """:class:`JvmCounters` of a buffer's long counters, None without heap counters."""
    used = [value for name, value in counters.items() if _USED.fullmatch(name)]
    if not used:
        return None
    ticks = [value for name, value in counters.items() if _GC_TICKS.fullmatch(name)]
    per_s = counters.get(_TICKS_PER_S, 0)
    return JvmCounters(sum(used), sum(ticks) / per_s if ticks and per_s > 0 else None)
