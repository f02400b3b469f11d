"""The greenlets that run units of work on the event loop (`api.db.unit_greenlets`) do what
SQLAlchemy's `greenlet_spawn` did, on uvloop and asyncio's loop: a unit's `await_only`
awaits on the loop, its value or its error reaches the task that asked, a cancellation
reaches the unit, and the task's context variables are the unit's; and a greenlet is kept
for the next unit once its own is done."""

import asyncio
import threading
import weakref
from collections.abc import Callable, Coroutine
from contextvars import ContextVar
from typing import Any, TypeVar

import pytest
from greenlet import getcurrent, greenlet
from sqlalchemy.util import await_only

from api.db.unit_greenlets import KeptGreenlets
from tests.api.conftest import NewLoop

T = TypeVar("T")

_CALLER: ContextVar[str] = ContextVar("test_unit_greenlets_caller", default="nobody")


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


def test_a_unit_sees_the_context_variables_of_its_task(new_loop: NewLoop) -> None:
    greenlets = KeptGreenlets()

    async def as_caller(name: str) -> str:
        _CALLER.set(name)
        return await greenlets.run(lambda: (await_only(_answer(0)), _CALLER.get())[1])

    async def main() -> list[str]:
        return list(await asyncio.gather(as_caller("alice"), as_caller("bob")))

    assert _run(new_loop, main) == ["alice", "bob"]


def test_the_next_unit_runs_in_the_greenlet_of_the_last(new_loop: NewLoop) -> None:
    greenlets = KeptGreenlets()

    async def main() -> list[greenlet]:
        return [await greenlets.run(getcurrent) for _ in range(3)]

    first, second, third = _run(new_loop, main)
    assert first is second is third


def test_a_greenlet_whose_unit_failed_serves_the_next(new_loop: NewLoop) -> None:
    greenlets = KeptGreenlets()

    def failing() -> None:
        raise UnitFailed("refused")

    async def main() -> int:
        with pytest.raises(UnitFailed):
            await greenlets.run(failing)
        return await greenlets.run(lambda: await_only(_answer(7)))

    assert _run(new_loop, main) == 7


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
    """A greenlet cannot be switched to from another thread: one kept by a loop that
    served before, in another thread, is not taken."""
    greenlets = KeptGreenlets()

    async def unit_runner() -> greenlet:
        return await greenlets.run(lambda: (await_only(_answer(0)), getcurrent())[1])

    elsewhere: list[greenlet] = []
    thread = threading.Thread(target=lambda: elsewhere.append(_run(new_loop, unit_runner)))
    thread.start()
    thread.join()

    assert _run(new_loop, unit_runner) is not elsewhere[0]


def test_a_finished_unit_leaves_nothing_alive_in_its_idle_greenlet(new_loop: NewLoop) -> None:
    """Neither what the unit returned nor what its work held (a request's data, say) stays
    alive in the greenlet waiting for the next unit."""
    greenlets = KeptGreenlets()

    class Payload:
        pass

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
