"""Hands: what a player's front end calls while playing, and history for the back office."""

import re

from litestar import Controller, get
from litestar.params import FromQuery, JSONBody
from litestar.response import Response

from api.domain.hands import service as hands
from api.domain.hands.answer import HandAnswer
from api.domain.hands.schemas import (
    Decision,
    HandOpen,
    HandPage,
    HandView,
    ResolvedHands,
    ResolvedHandView,
)
from api.domain.hands.unfinished import resolve_overdue
from api.domain.tokens.service import Principal, Role
from api.http.hot_path import HotCommand
from api.http.idempotency import Operation, PlayersTurn
from api.http.routing import (
    BEARER,
    CommandDependency,
    Cursor,
    DatabaseDependency,
    Limit,
    PathId,
    PrincipalDependency,
    QueryId,
    SettingsDependency,
    command,
    problems,
)
from api.pagination import DEFAULT_LIMIT
from api.settings import Settings
from casino.hand import Action, HandStatus


def placing(data: HandOpen, principal: Principal, settings: Settings) -> Operation:
    player_id = principal.own_player_id()
    policy = settings.protection
    return PlayersTurn(
        player_id,
        lambda session: HandAnswer(
            hands.open_hand(
                session,
                player_id,
                data.table_id,
                data.bet,
                data.tie_bet,
                data.currency,
                policy=policy,
                actor_token_id=principal.token_id,
            )
        ),
        lambda session: hands.opening_after_lock(
            session, player_id, data.table_id, (data.bet, data.tie_bet, data.currency)
        ),
    )


def deciding(hand_id: int, data: Decision, principal: Principal) -> Operation:
    player_id = principal.own_player_id()
    return PlayersTurn(
        player_id,
        lambda session: HandAnswer(
            hands.decide_hand(
                session,
                hand_id,
                Action(data.action),
                player_id=player_id,
                actor_token_id=principal.token_id,
            )
        ),
    )


HOT_COMMANDS = (
    HotCommand(
        re.compile(r"/v1/hands"),
        HandOpen,
        frozenset({Role.PLAYER}),
        201,
        lambda call: placing(call.body, call.principal, call.settings),
    ),
    HotCommand(
        re.compile(r"/v1/hands/([1-9][0-9]{0,18})/decision"),
        Decision,
        frozenset({Role.PLAYER}),
        200,
        lambda call: deciding(call.path_ids[0], call.body, call.principal),
    ),
)
"""Placing and deciding on the hot path (`api.http.hot_path`): the same operations, roles
and status codes as the two routes below, which serve every request it passes on."""


class HandController(Controller):
    path = "/v1/hands"
    tags = ("hands",)
    security = BEARER

    @command("/", 403, 404, 409)
    async def place_hand(
        self,
        data: JSONBody[HandOpen],
        principal: PrincipalDependency,
        settings: SettingsDependency,
        command: CommandDependency,
    ) -> Response[HandView]:
        """Place a bet (and optional tie bet) and deal; a tie waits for the player's decision.
        A player's limits and exclusion are checked first (docs/player-protection.md)."""
        return await command.run(data, placing(data, principal, settings))

    @command("/resolve-abandoned", 403, status_code=200)
    async def resolve_abandoned_hands(
        self,
        principal: PrincipalDependency,
        settings: SettingsDependency,
        command: CommandDependency,
    ) -> Response[ResolvedHands]:
        """Resolve every hand that has awaited a decision longer than the timeout, as the
        house (operators): the configured action, surrender when the wallet cannot cover a
        war; each a `hand_resolved_by_timeout` event naming the operator."""
        principal.require(Role.OPERATOR)
        timeout, action = settings.decision_timeout_seconds, settings.abandoned_tie_action
        return await command.run(
            None,
            lambda s: ResolvedHands(
                items=[
                    ResolvedHandView.model_validate(resolved)
                    for resolved in resolve_overdue(s, timeout, action, principal)
                ]
            ),
        )

    @command("/{hand_id:int}/decision", 403, 404, 409, status_code=200)
    async def decide_hand(
        self,
        hand_id: PathId,
        data: JSONBody[Decision],
        principal: PrincipalDependency,
        command: CommandDependency,
    ) -> Response[HandView]:
        """Go to war (raising the bet again) or surrender half the bet."""
        return await command.run(data, deciding(hand_id, data, principal))

    @get("/{hand_id:int}", sync_to_thread=True, responses=problems(404))
    def get_hand(
        self, hand_id: PathId, database: DatabaseDependency, principal: PrincipalDependency
    ) -> HandView:
        own = principal.player_id if principal.role is Role.PLAYER else None
        with database.reading() as session:
            hand = hands.view_hand(
                session, hand_id, player_id=own, reveal=principal.role is Role.AUDITOR
            )
            return HandView.model_validate(hand)

    @get("/", sync_to_thread=True, responses=problems())
    def list_hands(
        self,
        database: DatabaseDependency,
        principal: PrincipalDependency,
        status: FromQuery[HandStatus | None] = None,
        table_id: QueryId = None,
        player_id: QueryId = None,
        limit: Limit = DEFAULT_LIMIT,
        cursor: Cursor = None,
    ) -> HandPage:
        """Hand history, newest first; a player sees only their own."""
        if principal.role is Role.PLAYER:
            player_id = principal.player_id
        with database.reading() as session:
            page = hands.list_hands(
                session,
                player_id=player_id,
                table_id=table_id,
                status=status,
                cursor=cursor,
                limit=limit,
                reveal=principal.role is Role.AUDITOR,
            )
            return HandPage.model_validate(page)
