"""Fairness seeds and hands: what a player's front end calls while playing."""

from typing import Any, Literal

from litestar import Controller, Request, get
from litestar.params import FromQuery, JSONBody
from litestar.response import Response

from api.domain.hands import service as hands
from api.domain.hands.schemas import Decision, HandOpen, HandPage, HandView
from api.domain.tokens.service import Role
from api.http.routing import (
    BEARER,
    Cursor,
    DatabaseDependency,
    IdempotencyKey,
    Limit,
    PathId,
    PrincipalDependency,
    QueryId,
    command,
    problems,
    run_idempotent,
)
from casino.hand import Action


def _player_id(principal: PrincipalDependency) -> int:
    principal.require(Role.PLAYER)
    assert principal.player_id is not None
    return principal.player_id


class HandController(Controller):
    path = "/v1/hands"
    tags = ("hands",)
    security = BEARER

    @command("/", 403, 404, 409)
    def open_hand(
        self,
        request: Request[Any, Any, Any],
        data: JSONBody[HandOpen],
        principal: PrincipalDependency,
        idempotency_key: IdempotencyKey,
    ) -> Response[HandView]:
        """Place a bet (and optional tie bet) and deal; a tie waits for the player's decision."""
        player_id = _player_id(principal)
        return run_idempotent(
            request,
            principal,
            idempotency_key,
            data,
            HandView,
            lambda s: hands.open_hand(
                s, player_id, data.table_id, data.bet, data.tie_bet, data.currency
            ),
            status_code=201,
        )

    @command("/{hand_id:int}/decision", 403, 404, 409, status_code=200)
    def decide(
        self,
        request: Request[Any, Any, Any],
        hand_id: PathId,
        data: JSONBody[Decision],
        principal: PrincipalDependency,
        idempotency_key: IdempotencyKey,
    ) -> Response[HandView]:
        """Go to war (raising the bet again) or surrender half the bet."""
        player_id = _player_id(principal)
        return run_idempotent(
            request,
            principal,
            idempotency_key,
            data,
            HandView,
            lambda s: hands.decide_hand(s, hand_id, Action(data.action), player_id=player_id),
            status_code=200,
        )

    @get("/{hand_id:int}", sync_to_thread=True, responses=problems(404))
    def get_hand(
        self, hand_id: PathId, database: DatabaseDependency, principal: PrincipalDependency
    ) -> HandView:
        own = principal.player_id if principal.role is Role.PLAYER else None
        with database.reading() as session:
            return hands.view_hand(
                session, hand_id, player_id=own, reveal=principal.role is Role.AUDITOR
            )

    @get("/", sync_to_thread=True, responses=problems())
    def list_hands(
        self,
        database: DatabaseDependency,
        principal: PrincipalDependency,
        status: FromQuery[Literal["awaiting_decision", "settled"] | None] = None,
        table_id: QueryId = None,
        player_id: QueryId = None,
        limit: Limit = 50,
        cursor: Cursor = None,
    ) -> HandPage:
        """Hand history, newest first; a player sees only their own."""
        if principal.role is Role.PLAYER:
            player_id = principal.player_id
        with database.reading() as session:
            return hands.list_hands(
                session,
                player_id=player_id,
                table_id=table_id,
                status=status,
                cursor=cursor,
                limit=limit,
                reveal=principal.role is Role.AUDITOR,
            )
