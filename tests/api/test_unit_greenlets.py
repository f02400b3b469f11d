"""The greenlets that run units of work on the event loop (`api.db.unit_greenlets`) do what
SQLAlchemy's `greenlet_spawn` did, on uvloop and asyncio's loop: a unit's `await_only`
awaits on the loop, its value or its error reaches the task that asked, a cancellation
reaches the unit, the task's context variables are the unit's, and `GreenletExit` ends the
greenlet it is thrown into; and a greenlet is kept for the next unit once its own is done,
holding nothing of it."""

import asyncio
import contextlib
import contextvars
import gc
import threading
import traceback
import weakref
from collections.abc import Callable, Coroutine
from contextvars import ContextVar
from typing import Any, TypeVar

import pytest
from greenlet import GreenletExit, getcurrent, greenlet
from sqlalchemy.util import await_only

from api.db.unit_greenlets import KeptGreenlets
from tests.api.conftest import NewLoop

T = TypeVar("T")

_CALLER: ContextVar[str] = ContextVar("test_unit_greenlets_caller", default="nobody")
_HELD: ContextVar[object] = ContextVar("test_unit_greenlets_held")


class UnitFailed(Exception):
    pass


def _run(new_loop: NewLoop, main: Callable[[], Coroutine[Any, Any, T]]) -> T:
    loop = new_loop()
    try:
        return loop.run_until_complete(main())
    finally:
        loop.close()


async def _answer(value: int) -> int:
    await asyncio.sleep(0)
    return value


def _waits_then_names_its_greenlet() -> greenlet:
    await_only(_answer(0))
    return getcurrent()


class Payload:
    """Something whose life a test follows by a weak reference."""


def test_a_unit_awaits_on_the_loop_and_returns_its_value(new_loop: NewLoop) -> None:
    greenlets = KeptGreenlets()

    async def main() -> int:
        return await greenlets.run(lambda: await_only(_answer(20)) + await_only(_answer(22)))

    assert _run(new_loop, main) == 42


def test_what_a_unit_raises_is_raised_to_the_task(new_loop: NewLoop) -> None:
    greenlets = KeptGreenlets()
    failure = UnitFailed("refused")

    def unit() -> None:
        await_only(_answer(1))
        raise failure

    async def main() -> None:
        await greenlets.run(unit)

    with pytest.raises(UnitFailed) as raised:
        _run(new_loop, main)
    assert raised.value is failure


def test_an_error_of_what_a_unit_awaits_reaches_it_with_where_it_was_raised(
    new_loop: NewLoop,
) -> None:
    greenlets = KeptGreenlets()

    async def failing_wait() -> None:
        await asyncio.sleep(0)
        raise UnitFailed("the wait failed")

    def unit() -> list[str]:
        try:
            await_only(failing_wait())
        except UnitFailed as failed:
            return [frame.name for frame in traceback.extract_tb(failed.__traceback__)]
        return []

    async def main() -> list[str]:
        return await greenlets.run(unit)

    assert "failing_wait" in _run(new_loop, main)


def test_a_cancelled_task_cancels_the_unit_waiting_in_it(new_loop: NewLoop) -> None:
    greenlets = KeptGreenlets()
    seen: list[str] = []

    def unit() -> None:
        try:
            await_only(asyncio.sleep(3600))
        except asyncio.CancelledError:
            seen.append("cancelled inside the unit")
            raise

    async def main() -> None:
        task = asyncio.ensure_future(greenlets.run(unit))
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    _run(new_loop, main)
    assert seen == ["cancelled inside the unit"]


def test_a_unit_that_swallows_its_cancellation_goes_on_awaiting(new_loop: NewLoop) -> None:
    greenlets = KeptGreenlets()

    def unit() -> int:
        with contextlib.suppress(asyncio.CancelledError):
            await_only(asyncio.sleep(3600))
        return await_only(_answer(5))

    async def main() -> int:
        task = asyncio.ensure_future(greenlets.run(unit))
        await asyncio.sleep(0.01)
        task.cancel()
        return await task

    assert _run(new_loop, main) == 5


def test_a_unit_that_ends_its_greenlet_fails_and_its_greenlet_is_not_kept(
    new_loop: NewLoop,
) -> None:
    """`GreenletExit` ends a greenlet wherever it is raised (greenlet throws it into one it
    collects): a unit that raises it fails, and leaves no greenlet to keep."""
    greenlets = KeptGreenlets()
    ended_in: list[greenlet] = []

    def ending() -> None:
        await_only(_answer(0))
        ended_in.append(getcurrent())
        raise GreenletExit

    async def main() -> greenlet:
        with pytest.raises(RuntimeError, match="greenlet running this unit of work ended"):
            await greenlets.run(ending)
        return await greenlets.run(_waits_then_names_its_greenlet)

    next_in = _run(new_loop, main)
    assert ended_in[0].dead
    assert next_in is not ended_in[0]


def test_a_greenlet_thrown_greenlet_exit_inside_its_unit_ends(new_loop: NewLoop) -> None:
    """What greenlet does to a greenlet it collects while its unit waits (its task dropped):
    the greenlet ends, rather than live on, leaked with the unit's frames."""
    greenlets = KeptGreenlets()
    waiting_in: list[greenlet] = []

    def unit() -> None:
        waiting_in.append(getcurrent())
        await_only(asyncio.sleep(3600))

    async def main() -> bool:
        task = asyncio.ensure_future(greenlets.run(unit))
        await asyncio.sleep(0.01)
        waiting_in[0].throw(GreenletExit)
        ended = bool(waiting_in[0].dead)
        task.cancel()
        with contextlib.suppress(BaseException):
            await task
        return ended

    assert _run(new_loop, main)


def test_a_unit_sees_the_context_variables_of_its_task(new_loop: NewLoop) -> None:
    greenlets = KeptGreenlets()

    async def as_caller(name: str) -> str:
        _CALLER.set(name)
        return await greenlets.run(lambda: (await_only(_answer(0)), _CALLER.get())[1])

    async def main() -> list[str]:
        return list(await asyncio.gather(as_caller("alice"), as_caller("bob")))

    assert _run(new_loop, main) == ["alice", "bob"]


def test_a_kept_greenlet_takes_the_context_of_the_task_it_serves_next(
    new_loop: NewLoop,
) -> None:
    greenlets = KeptGreenlets()

    async def as_caller(name: str) -> tuple[greenlet, str]:
        _CALLER.set(name)
        return await greenlets.run(lambda: (_waits_then_names_its_greenlet(), _CALLER.get()))

    async def main() -> list[tuple[greenlet, str]]:
        return [
            await asyncio.ensure_future(as_caller("alice")),
            await asyncio.ensure_future(as_caller("bob")),
        ]

    (alices, alice), (bobs, bob) = _run(new_loop, main)
    assert alices is bobs
    assert (alice, bob) == ("alice", "bob")


def test_the_next_unit_runs_in_the_greenlet_of_the_last(new_loop: NewLoop) -> None:
    greenlets = KeptGreenlets()

    async def main() -> list[greenlet]:
        return [await greenlets.run(_waits_then_names_its_greenlet) for _ in range(3)]

    first, second, third = _run(new_loop, main)
    assert first is second is third


@pytest.mark.parametrize("raised", [UnitFailed, KeyboardInterrupt])
def test_a_greenlet_whose_unit_raised_serves_the_next(
    new_loop: NewLoop, raised: type[BaseException]
) -> None:
    """An error or an interrupt: either reaches the task, and the greenlet goes on."""
    greenlets = KeptGreenlets()

    def failing() -> None:
        await_only(_answer(0))
        raise raised(getcurrent())

    async def main() -> tuple[object, greenlet]:
        with pytest.raises(raised) as caught:
            await greenlets.run(failing)
        return caught.value.args[0], await greenlets.run(_waits_then_names_its_greenlet)

    failed_in, next_in = _run(new_loop, main)
    assert failed_in is next_in


def test_units_waiting_at_once_each_run_in_a_greenlet_of_their_own(new_loop: NewLoop) -> None:
    greenlets = KeptGreenlets()

    def unit() -> greenlet:
        await_only(asyncio.sleep(0.01))
        return getcurrent()

    async def main() -> list[greenlet]:
        return list(await asyncio.gather(*(greenlets.run(unit) for _ in range(3))))

    assert len({id(runner) for runner in _run(new_loop, main)}) == 3


def test_a_loop_in_another_thread_runs_its_units_in_greenlets_of_its_own(
    new_loop: NewLoop,
) -> None:
    """A greenlet cannot be switched to from another thread: one kept by a loop that served
    before, in another thread, is not taken (taking it fails the unit)."""
    greenlets = KeptGreenlets()

    async def unit_runner() -> greenlet:
        return await greenlets.run(_waits_then_names_its_greenlet)

    elsewhere: list[greenlet] = []
    thread = threading.Thread(target=lambda: elsewhere.append(_run(new_loop, unit_runner)))
    thread.start()
    thread.join()

    assert _run(new_loop, unit_runner) is not elsewhere[0]


def test_an_idle_greenlet_keeps_nothing_a_unit_held_or_returned(new_loop: NewLoop) -> None:
    """Neither what the unit's work held (a request's data, say) nor what it returned stays
    alive in the greenlet waiting for the next unit."""
    greenlets = KeptGreenlets()
    made: list[weakref.ref[Payload]] = []

    async def main() -> None:
        held = Payload()
        made.append(weakref.ref(held))

        def unit() -> Payload:
            returned = Payload()
            made.append(weakref.ref(returned))
            return held and returned

        await greenlets.run(unit)

    _run(new_loop, main)
    assert [ref() for ref in made] == [None, None]


def test_an_idle_greenlet_keeps_nothing_of_a_failed_unit(new_loop: NewLoop) -> None:
    """The error and its traceback go (once the cycle between them and the unit's frame is
    collected, as it would be anywhere)."""
    greenlets = KeptGreenlets()
    made: list[weakref.ref[UnitFailed]] = []

    def failing() -> None:
        failure = UnitFailed("refused")
        made.append(weakref.ref(failure))
        raise failure

    async def main() -> None:
        with pytest.raises(UnitFailed):
            await greenlets.run(failing)

    _run(new_loop, main)
    gc.collect()
    assert made[0]() is None


def test_an_idle_greenlet_keeps_nothing_of_the_last_task_s_context(new_loop: NewLoop) -> None:
    greenlets = KeptGreenlets()
    made: list[weakref.ref[Payload]] = []

    async def in_a_context_of_its_own() -> None:
        payload = Payload()
        made.append(weakref.ref(payload))
        _HELD.set(payload)
        await greenlets.run(_waits_then_names_its_greenlet)

    async def main() -> None:
        await asyncio.get_running_loop().create_task(
            in_a_context_of_its_own(), context=contextvars.Context()
        )

    _run(new_loop, main)
    assert made[0]() is None
