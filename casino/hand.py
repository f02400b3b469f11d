"""A hand of Casino War as a state machine over immutable values.

deal -> settled, or deal -> awaiting decision -> (war | surrender) -> settled. Every
transition is a pure function of the hand and the seeds it carries, so replaying a hand is
calling the same functions again.
"""

from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from casino.cards import compare
from casino.errors import HandNotAwaitingDecision, SurrenderNotAllowed
from casino.fairness import HandSeeds, draw_cards
from casino.rules import GameRules
from casino.shoe import ordered_shoe


class Outcome(StrEnum):
    PLAYER_WIN = "player_win"
    DEALER_WIN = "dealer_win"
    SURRENDER = "surrender"
    WAR_WIN = "war_win"
    WAR_TIE = "war_tie"
    WAR_LOSS = "war_loss"


class Action(StrEnum):
    WAR = "war"
    SURRENDER = "surrender"


class HandStatus(StrEnum):
    AWAITING_DECISION = "awaiting_decision"
    SETTLED = "settled"


@dataclass(frozen=True, slots=True)
class WarRound:
    burned: tuple[str, ...]
    player_card: str
    dealer_card: str


@dataclass(frozen=True, slots=True)
class Hand:
    """One hand and everything that follows from it: cards, decision, outcome and money."""

    rules: GameRules
    seeds: HandSeeds
    bet: int
    tie_bet: int
    player_card: str
    dealer_card: str
    decision: Action | None = None
    war: WarRound | None = None
    outcome: Outcome | None = None

    @property
    def status(self) -> HandStatus:
        return HandStatus.AWAITING_DECISION if self.outcome is None else HandStatus.SETTLED

    @property
    def first_deal_tied(self) -> bool:
        return compare(self.player_card, self.dealer_card, ace_low=self.rules.ace_low) == 0

    @property
    def cards(self) -> tuple[str, ...]:
        """Every card drawn, in the order fairness.md deals them."""
        first = (self.player_card, self.dealer_card)
        if self.war is None:
            return first
        return (*first, *self.war.burned, self.war.player_card, self.war.dealer_card)

    @property
    def raise_amount(self) -> int:
        return self.bet if self.decision is Action.WAR else 0

    @property
    def total_staked(self) -> int:
        return self.bet + self.tie_bet + self.raise_amount

    @property
    def tie_net(self) -> int:
        """The tie bet is decided by the first deal alone."""
        return self.rules.tie_payout * self.tie_bet if self.first_deal_tied else -self.tie_bet

    @property
    def main_net(self) -> int | None:
        """Net on the main bet and raise together; None while the player must still decide."""
        match self.outcome:
            case None:
                return None
            case Outcome.PLAYER_WIN | Outcome.WAR_WIN:
                return self.bet
            case Outcome.DEALER_WIN:
                return -self.bet
            case Outcome.SURRENDER:
                return -self.bet // 2
            case Outcome.WAR_TIE:
                return 2 * self.bet if self.rules.war_tie_bonus else self.bet
            case Outcome.WAR_LOSS:
                return -2 * self.bet

    @property
    def net(self) -> int | None:
        main_net = self.main_net
        return None if main_net is None else main_net + self.tie_net

    @property
    def total_returned(self) -> int | None:
        """What goes back to the wallet at settlement: stakes returned plus winnings."""
        net = self.net
        return None if net is None else self.total_staked + net


def check_wager(bet: int, tie_bet: int) -> None:
    """Refuse a wager no hand can take: a surrender returns half the bet, so it is even."""
    if bet <= 0 or bet % 2:
        raise ValueError(f"bet must be a positive even amount, got {bet}")
    if tie_bet < 0:
        raise ValueError(f"tie_bet must be zero or more, got {tie_bet}")


def deal(rules: GameRules, seeds: HandSeeds, bet: int, tie_bet: int = 0) -> Hand:
    """Deal the first two cards; settle at once unless they tie."""
    check_wager(bet, tie_bet)
    player_card, dealer_card = draw_cards(seeds, _shoe(rules), 2)
    difference = compare(player_card, dealer_card, ace_low=rules.ace_low)
    outcome = (
        None if difference == 0 else Outcome.PLAYER_WIN if difference > 0 else Outcome.DEALER_WIN
    )
    return Hand(rules, seeds, bet, tie_bet, player_card, dealer_card, outcome=outcome)


def check_action(rules: GameRules, action: Action) -> None:
    """Refuse a decision the rules do not offer: surrender, where it is not allowed."""
    if action is Action.SURRENDER and not rules.surrender_allowed:
        raise SurrenderNotAllowed("this table does not allow surrender")


def decide(hand: Hand, action: Action) -> Hand:
    """Apply the player's choice on a tie: surrender half the bet, or raise and go to war."""
    if hand.status is not HandStatus.AWAITING_DECISION:
        raise HandNotAwaitingDecision("the hand is not awaiting a decision")
    check_action(hand.rules, action)
    if action is Action.SURRENDER:
        return replace(hand, decision=action, outcome=Outcome.SURRENDER)
    rules = hand.rules
    cards = draw_cards(hand.seeds, _shoe(rules), rules.cards_for_war)
    war = WarRound(burned=cards[2:-2], player_card=cards[-2], dealer_card=cards[-1])
    difference = compare(war.player_card, war.dealer_card, ace_low=rules.ace_low)
    outcome = (
        Outcome.WAR_WIN
        if difference > 0
        else Outcome.WAR_LOSS
        if difference < 0
        else Outcome.WAR_TIE
    )
    return replace(hand, decision=action, war=war, outcome=outcome)


def play(rules: GameRules, seeds: HandSeeds, bet: int, tie_bet: int, action: Action | None) -> Hand:
    """Deal and, if the first deal ties and an action is given, decide: the whole replay."""
    hand = deal(rules, seeds, bet, tie_bet)
    if action is None or hand.status is HandStatus.SETTLED:
        return hand
    return decide(hand, action)


def _shoe(rules: GameRules) -> tuple[str, ...]:
    return ordered_shoe(rules.decks, rules.jokers_per_deck)


def summary(hand: Hand) -> dict[str, Any]:
    """The hand in plain values, one name each: what `casino-war verify --json` prints and
    the audit shows as the hand its replay derives."""
    war = hand.war
    return {
        "status": hand.status.value,
        "cards": list(hand.cards),
        "player_card": hand.player_card,
        "dealer_card": hand.dealer_card,
        "war": None
        if war is None
        else {
            "burned": list(war.burned),
            "player_card": war.player_card,
            "dealer_card": war.dealer_card,
        },
        "decision": None if hand.decision is None else hand.decision.value,
        "outcome": None if hand.outcome is None else hand.outcome.value,
        "bet": hand.bet,
        "tie_bet": hand.tie_bet,
        "raise": hand.raise_amount,
        "total_staked": hand.total_staked,
        "total_returned": hand.total_returned,
        "main_net": hand.main_net,
        "tie_net": hand.tie_net,
        "net": hand.net,
    }
