"""Domain errors: each names a rule of the game that a request would break."""

# The names read as the refusals they are (`SurrenderNotAllowed`) and mirror the API's
# error codes; an `Error` suffix would add nothing.


class GameError(Exception):
    """Base of every refusal the game itself makes; `code` is stable for clients."""

    code = "game_error"


class InvalidRules(GameError):
    """A rule set outside what rules.md allows."""

    code = "validation_error"

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class InvalidSeed(GameError):
    """A seed that fairness.md does not allow (wrong length, alphabet or encoding)."""

    code = "validation_error"

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class BetOutOfRange(GameError):
    code = "bet_out_of_range"


class BetNotMultipleOfUnit(GameError):
    code = "bet_not_multiple_of_unit"


class HandNotAwaitingDecision(GameError):
    code = "hand_not_awaiting_decision"


class SurrenderNotAllowed(GameError):
    code = "surrender_not_allowed"


class InvalidChoice(GameError):
    """A War player's choice that the game's rules or the seat's policy do not allow."""

    code = "validation_error"

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class WarGameOver(GameError):
    code = "war_game_over"
