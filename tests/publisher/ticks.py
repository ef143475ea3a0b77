"""How many messages a schedule makes due per tick: what the schedule tests compare."""

from publisher.schedule import Schedule


def messages_per_tick(schedule: Schedule, ticks: int) -> list[int]:
    """Messages (two per pair) due in each of the first ``ticks`` ticks."""
    return [2 * len(schedule.tick_offsets(k)) for k in range(ticks)]
