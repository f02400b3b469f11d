"""The greenlets that run units of work on the event loop, kept from one unit to the next.

A unit of work on the loop is synchronous code whose waits for the database are awaited on
the loop (`api.db.loop_units`): it runs in a greenlet, and `await_only` inside it hands each
awaitable to the greenlet that runs the loop. SQLAlchemy's `greenlet_spawn` makes a new
greenlet for every call, which cost a unit of work 10 µs of CPU and a mapping of memory
made and unmade (`mmap`, `munmap`), where switching into a greenlet kept from the last unit
costs under 1 µs (docs/performance-log.md, "A greenlet kept for the next unit of work").

A kept greenlet runs one unit after another, each in the context of the task that asked
for it, and carries SQLAlchemy's marker, so that `await_only` treats it as its own.
"""

from collections.abc import Callable
from typing import Any, TypeVar, cast

from greenlet import GreenletExit, getcurrent, greenlet

T = TypeVar("T")


class _UnitGreenlet(greenlet):
    """A greenlet that SQLAlchemy's `await_only` takes for one of its own, by the marker it
    looks for: inside it, `await_only` hands its awaitable to the greenlet's parent, the
    loop's, as it does inside `greenlet_spawn`'s."""

    __sqlalchemy_greenlet_provider__ = True


class _Finished:
    """A unit's outcome, handed back to the loop: its value, or what it raised."""

    __slots__ = ("error", "value")

    def __init__(self, value: Any, error: BaseException | None) -> None:
        self.value = value
        self.error = error


def _serve() -> None:
    """A kept greenlet's life: wait for a unit, run it, hand its outcome back, and so on.

    The units come by `switch`, not as arguments: a greenlet holds its first arguments for
    as long as it lives. `GreenletExit` is not a unit's outcome: greenlet throws it into a
    greenlet it collects, wherever that greenlet is suspended (waiting for its next unit,
    or inside a unit whose task was dropped), and it must end the greenlet, as it ended
    `greenlet_spawn`'s; a greenlet that survived it would be leaked with the unit's frames.
    """
    finished: _Finished | None = None
    while True:
        loop_greenlet = getcurrent().parent
        assert loop_greenlet is not None  # `KeptGreenlets.run` sets it before every unit
        work = loop_greenlet.switch(finished)
        try:
            finished = _Finished(work(), None)
        except GreenletExit:
            raise
        except BaseException as error:  # the unit's to raise, in the task that asked for it
            finished = _Finished(None, error)
        del work  # nothing of a finished unit is kept while the greenlet waits


class KeptGreenlets:
    """Greenlets for the units of work of one event loop, each back in the list once its
    unit is done. As many exist as units ever ran at once (no more than the kept
    connections they run on), all of the loop's thread."""

    def __init__(self) -> None:
        self._idle: list[_UnitGreenlet] = []

    async def run(self, work: Callable[[], T]) -> T:
        """`work()` in a greenlet whose `await_only` awaits on this loop, as
        `greenlet_spawn(work)` runs it: what it raises is raised here, and what this task
        is thrown while the unit waits (a cancellation) is thrown into the unit."""
        here = getcurrent()
        runner = self._kept(here) or self._new(here)
        runner.gr_context = here.gr_context  # the task's context: its context variables
        step = runner.switch(work)
        while not isinstance(step, _Finished):
            if runner.dead:  # `GreenletExit` ended it, raised in the unit or thrown into it
                ended = step if isinstance(step, BaseException) else None
                raise RuntimeError("the greenlet running this unit of work ended") from ended
            try:
                value = await step
            except BaseException as thrown:
                # With its traceback: thrown alone, it would keep only the unit's frames.
                step = runner.throw(type(thrown), thrown, thrown.__traceback__)
            else:
                step = runner.switch(value)
        # The waiting greenlet still holds the outcome and the last task's context: emptied
        # and dropped, neither keeps anything of this unit alive until the next.
        value, error = step.value, step.error
        step.value = step.error = None
        runner.gr_context = None
        self._idle.append(runner)
        if error is not None:
            raise error
        return cast(T, value)

    def _kept(self, here: greenlet) -> _UnitGreenlet | None:
        """An idle greenlet of this thread, now a child of `here`; None if there is none.
        One of another thread (a loop that served before this one: tests start several)
        cannot be switched to from here, and is dropped."""
        while self._idle:
            runner = self._idle.pop()
            try:
                runner.parent = here
            except ValueError:  # "parent cannot be on a different thread"
                continue
            return runner
        return None

    @staticmethod
    def _new(here: greenlet) -> _UnitGreenlet:
        runner = _UnitGreenlet(_serve, here)
        runner.switch()  # to its first wait for a unit
        return runner

    def clear(self) -> None:
        """Drop the idle greenlets (each ends as it is collected): before the loop they
        belong to goes, since a greenlet cannot be switched to from another thread."""
        self._idle.clear()
