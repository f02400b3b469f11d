"""The one game loop of the War family: `start` deals, `play_turn` plays one turn.

Both are pure: the same set-up, state and input give the same result, because every random
pick (the shuffle, a Random card, a random sort, Crazy Mode's draws) reads the game's own
fairness stream, resumed at the state's `position`. Inside a turn the piles are worked on
as local lists for speed; what leaves is frozen again.
"""

from collections.abc import Sequence
from dataclasses import replace
from typing import Final

from casino.cards import JOKER
from casino.errors import InvalidChoice, WarGameOver
from casino.war.cycles import brent_step, state_digest
from casino.war.deck import JOKER_STRENGTH, Ranking, ordered_deck, rank_of, ranking, suit_of
from casino.war.rules import SUIT_LETTERS, SortOrder, WarRules
from casino.war.state import (
    CRAZY_EVENTS,
    Choice,
    GameEnd,
    GameState,
    Play,
    Steal,
    TurnInput,
    TurnRecord,
    WarGame,
    check_choice,
)
from casino.war.stream import GameRandomness

_BLACK_SUITS: Final = "CS"
_SORTS: Final[tuple[SortOrder, ...]] = ("collected", "high_to_low", "low_to_high", "random")
_PERCENT: Final = 100


def start(game: WarGame) -> GameState:
    """Shuffle the pack with the game's stream and deal it out."""
    rules = game.rules
    deck = list(_playing_deck(rules))
    randomness = GameRandomness(game, 0)
    randomness.shuffle(deck)
    piles: tuple[tuple[str, ...], ...]
    if rules.deal == "by_colour":
        piles = (
            tuple(c for c in deck if suit_of(c) in _BLACK_SUITS),
            tuple(c for c in deck if suit_of(c) not in _BLACK_SUITS),
        )
    else:
        piles = tuple(tuple(deck[seat :: rules.players]) for seat in range(rules.players))
    state = GameState(draw=piles, won=((),) * rules.players, position=randomness.position)
    return replace(state, checkpoint=state_digest(state))


def _playing_deck(rules: WarRules) -> list[str]:
    """The ordered pack, less its lowest cards when the rules deal only even hands."""
    deck = list(ordered_deck(rules))
    if rules.uneven_deal == "remove_lowest":
        order = ranking(rules)
        lowest_first = sorted(range(len(deck)), key=lambda i: (order.of(deck[i]), i))
        removed = set(lowest_first[: len(deck) % rules.players])
        deck = [card for i, card in enumerate(deck) if i not in removed]
    return deck


def play_turn(game: WarGame, state: GameState, given: TurnInput) -> tuple[GameState, TurnRecord]:
    """Play one turn: every seat still in plays a card, the highest takes them, ties go to
    war. Refuses a finished game, and input for seats that are not human."""
    if state.end is not None:
        raise WarGameOver("the game has ended")
    turn = _Turn(game, state, _resolve_choices(game, state, given), given.sort)
    return turn.play()


def _resolve_choices(game: WarGame, state: GameState, given: TurnInput) -> list[Choice | None]:
    """Each seat's choice this turn: a human's input (top when none is given), a fixed
    seat's policy; None for seats out of the game."""
    seats_in = set(state.seats_in)
    for seat in given.choices:
        if seat not in range(len(game.seats)) or game.seats[seat] != "human":
            raise InvalidChoice(f"choices.{seat}", "is not a human seat of this game")
    if given.sort is not None and given.sort not in _SORTS:
        raise InvalidChoice("sort", f"must be one of {', '.join(_SORTS)}")
    choices: list[Choice | None] = []
    for seat, policy in enumerate(game.seats):
        if seat not in seats_in:
            choices.append(None)
        elif policy == "human":
            wanted = given.choices.get(seat, "top")
            choices.append(check_choice(game.rules, wanted, f"choices.{seat}"))
        else:
            choices.append(policy)
    return choices


class _Turn:
    """One turn's working copy of the piles; `play` returns the frozen result."""

    def __init__(
        self, game: WarGame, state: GameState, choices: list[Choice | None], sort: str | None
    ) -> None:
        self.game = game
        self.rules = game.rules
        self.state = state
        self.choices = choices
        self.sort = sort
        self.ranking: Ranking = ranking(game.rules)
        self.random = GameRandomness(game, state.position)
        self.draw = [list(pile) for pile in state.draw]
        self.won = [list(pile) for pile in state.won]
        self.dead = list(state.dead)
        self.table: list[str] = []
        self.plays: list[Play] = []
        self.steals: list[Steal] = []
        self.recycled: list[tuple[int, str]] = []
        self.wars = 0
        self.event: str | None = None

    def play(self) -> tuple[GameState, TurnRecord]:
        seats_in = [s for s, choice in enumerate(self.choices) if choice is not None]
        self.event = self._crazy_event(seats_in)
        self._before_battle(seats_in)
        winner = self._battle(seats_in)
        if self.event == "everyone_loses" or winner is None:
            self.dead.extend(self.table)
        else:
            self._gather(winner)
        if self.event == "random_player_loses_won_cards":
            holders = [s for s in range(len(self.draw)) if self.draw[s] or self.won[s]]
            if holders:
                loser = holders[self.random.below(len(holders))]
                self.dead.extend(self.won[loser])
                self.won[loser] = []
        return self._finish(seats_in, None if self.event == "everyone_loses" else winner)

    # -- Crazy Mode ------------------------------------------------------------------------

    def _crazy_event(self, seats_in: Sequence[int]) -> str | None:
        """A majority voting Crazy draws, with the rules' likelihood, one event of seven."""
        votes = sum(1 for s in seats_in if self.choices[s] == "crazy")
        if not self.rules.crazy_mode or 2 * votes <= len(seats_in):
            return None
        if self.random.below(_PERCENT) >= self.rules.crazy_likelihood:
            return None
        return CRAZY_EVENTS[self.random.below(len(CRAZY_EVENTS))]

    def _before_battle(self, seats_in: Sequence[int]) -> None:
        if self.event == "swap_draw_decks":
            _rotate(self.draw, seats_in)
        elif self.event == "swap_won_cards":
            _rotate(self.won, seats_in)
        elif self.event == "shuffle_draw_decks":
            for seat in seats_in:
                self.random.shuffle(self.draw[seat])

    # -- The battle and its wars ------------------------------------------------------------

    def _battle(self, seats_in: Sequence[int]) -> int | None:
        """Who takes the table: the highest face-up card, wars settling ties."""
        face_up: dict[int, str] = {}
        for seat in seats_in:
            card = self._take(seat, self.choices[seat] or "top")
            if card is None:  # emptied by a Crazy swap before it could play
                continue
            face_up[seat] = self._play_face_up(seat, card)
        contenders = list(face_up)
        while True:
            if len(contenders) <= 1:
                return contenders[0] if contenders else None
            tied = self._highest(contenders, face_up)
            if len(tied) == 1:
                return tied[0]
            self.wars += 1
            fighting = tied if self.rules.war_participants == "tied" else contenders
            contenders = self._war(fighting, face_up, face_up[tied[0]])

    def _war(self, fighting: list[int], face_up: dict[int, str], tied_card: str) -> list[int]:
        """Each fighter lays its face-down cards and one face up; returns those still in.

        A fighter short of cards has put everything it held on the table: with
        `short_war=lose` it drops out; with `last_card_up` its last card is its face-up card.
        When every fighter runs short, the one who ran out last (laid most) fights on.
        """
        size = self._war_size(tied_card)
        still_in: list[int] = []
        laid: dict[int, int] = {}
        for seat in fighting:
            available = len(self.draw[seat]) + len(self.won[seat])
            if available > size:
                down, up = size, True
            elif available and self.rules.short_war == "last_card_up":
                down, up = available - 1, True
            else:
                down, up = available, False
            for _ in range(down):
                self._lay(seat, face_up=False)
            laid[seat] = down
            if up:
                face_up[seat] = self._play_face_up(seat, self._lay(seat, face_up=True))
                still_in.append(seat)
        if still_in:
            return still_in
        most = max(laid.values())
        last_out = [seat for seat in fighting if laid[seat] == most]
        return last_out if most and len(last_out) == 1 else []

    def _war_size(self, tied_card: str) -> int:
        """Face-down cards per fighter: fixed, or (Razboi, Syrian War) the tied rank's pips
        counting the face-up card, so a war on sevens lays six down and the seventh up."""
        if self.rules.war_size == "fixed" or tied_card == JOKER:
            return self.rules.face_down
        return self.ranking.pip_value(tied_card, self.rules.picture_war_size) - 1

    def _highest(self, contenders: Sequence[int], face_up: dict[int, str]) -> list[int]:
        cards = [face_up[s] for s in contenders]
        keys = [self._strength(card, cards) for card in cards]
        best = max(keys)
        return [s for s, key in zip(contenders, keys, strict=True) if key == best]

    def _strength(self, card: str, on_table: Sequence[str]) -> tuple[int, int]:
        strength = self.ranking.of(card)
        if (
            self.rules.lowest_beats_ace
            and rank_of(card) == self.ranking.lowest
            and any(rank_of(other) == "A" for other in on_table)
        ):
            strength = JOKER_STRENGTH - 1
        if self.event == "lowest_wins":
            return (0, -strength)
        if self.event == "suit_wins":
            suit = suit_of(card)
            return (SUIT_LETTERS.index(suit) if suit else len(SUIT_LETTERS), strength)
        return (0, strength)

    # -- Moving cards -----------------------------------------------------------------------

    def _play_face_up(self, seat: int, card: str) -> str:
        """A face-up card may steal (Steal War): a seat whose choice is to steal takes the
        won pile it matches, lays its card on top, and plays its next card instead."""
        while self.choices[seat] == "steal":
            victim = self._steal_victim(seat, card)
            if victim is None:
                break
            stolen = self.won[victim]
            self.won[victim] = []
            self.table.remove(card)
            self.plays.append(Play(seat, card, face_up=True))
            self.won[seat].extend([*stolen, card])
            self.steals.append(Steal(seat, victim, len(stolen)))
            next_card = self._take(seat, "top")
            if next_card is None:
                raise AssertionError("a thief holds at least the pile it stole")
            card = next_card
        self.plays.append(Play(seat, card, face_up=True))
        return card

    def _steal_victim(self, seat: int, card: str) -> int | None:
        players = len(self.won)
        for offset in range(1, players):
            other = (seat + offset) % players
            pile = self.won[other]
            if pile and rank_of(pile[-1]) == rank_of(card):
                return other
        return None

    def _lay(self, seat: int, *, face_up: bool) -> str:
        card = self._take(seat, "top")
        if card is None:
            raise AssertionError("cards were counted before they were laid")
        if not face_up:
            self.plays.append(Play(seat, card, face_up=False))
        return card

    def _take(self, seat: int, how: str) -> str | None:
        """The seat's next card onto the table: top, bottom or a random one of its draw
        deck, turning its won cards into a new draw deck first when the deck is empty."""
        pile = self.draw[seat]
        if not pile and self.won[seat]:
            self._recycle(seat)
        if not pile:
            return None
        if how == "bottom":
            card = pile.pop()
        elif how == "random":
            card = pile.pop(self.random.below(len(pile)))
        else:
            card = pile.pop(0)
        self.table.append(card)
        return card

    def _recycle(self, seat: int) -> None:
        """Won cards become the draw deck in the seat's sort order: a human's choice this
        turn, else the rules' default; the first collected card is on top."""
        order = self.sort if self.game.seats[seat] == "human" and self.sort else self.rules.sort
        cards = self.won[seat]
        self.won[seat] = []
        if order == "high_to_low":
            cards.sort(key=self.ranking.of, reverse=True)
        elif order == "low_to_high":
            cards.sort(key=self.ranking.of)
        elif order == "random":
            self.random.shuffle(cards)
        self.draw[seat].extend(cards)
        self.recycled.append((seat, order))

    def _gather(self, winner: int) -> None:
        cards = self.table
        if self.rules.gather_order == "shuffled":
            self.random.shuffle(cards)
        if self.rules.won_cards == "pile":
            self.won[winner].extend(cards)
        else:
            self.draw[winner].extend(cards)

    # -- After the turn ---------------------------------------------------------------------

    def _finish(self, seats_in: Sequence[int], winner: int | None) -> tuple[GameState, TurnRecord]:
        state = GameState(
            draw=tuple(map(tuple, self.draw)),
            won=tuple(map(tuple, self.won)),
            dead=tuple(self.dead),
            turn=self.state.turn + 1,
            position=self.random.position,
            checkpoint=self.state.checkpoint,
            power=self.state.power,
            since=self.state.since,
        )
        holders = state.seats_in
        end: GameEnd | None = None
        if len(holders) == 1:
            end = GameEnd("winner", holders[0])
        elif not holders:
            end = GameEnd("draw")
        elif state.turn >= self.rules.max_turns:
            end = GameEnd("cap")
        elif self.game.deterministic:
            state, repeated = brent_step(state)
            end = GameEnd("cycle") if repeated else None
        if end is not None:
            state = replace(state, end=end)
        record = TurnRecord(
            turn=state.turn,
            choices=tuple(self.choices),
            event=self.event,
            plays=tuple(self.plays),
            steals=tuple(self.steals),
            wars=self.wars,
            winner=winner,
            recycled=tuple(self.recycled),
            out=tuple(s for s in seats_in if s not in holders),
            end=end,
        )
        return state, record


def _rotate(piles: list[list[str]], seats: Sequence[int]) -> None:
    """Each listed seat takes the next one's pile: with two seats, a swap."""
    taken = [piles[s] for s in seats]
    for index, seat in enumerate(seats):
        piles[seat] = taken[(index + 1) % len(seats)]
