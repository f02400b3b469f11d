"""A War game's share of the fairness stream, read only when a turn needs it."""

from casino.fairness import RandomStream
from casino.war.state import WarGame


class GameRandomness:
    """The game's stream, opened only when a turn first needs it (most turns of a fixed
    game need none), and its position afterwards."""

    def __init__(self, game: WarGame, position: int) -> None:
        self._game = game
        self._position = position
        self._stream: RandomStream | None = None

    def below(self, n: int) -> int:
        if self._stream is None:
            self._stream = RandomStream.resumed(self._game.seeds, self._position)
        return self._stream.below(n)

    @property
    def position(self) -> int:
        return self._position if self._stream is None else self._stream.consumed

    def shuffle(self, cards: list[str]) -> None:
        """Fisher-Yates from the top, as fairness.md deals a shoe (the last card's draw,
        from one card, is read too, so the stream's position is the shoe's)."""
        for i in range(len(cards)):
            j = i + self.below(len(cards) - i)
            cards[i], cards[j] = cards[j], cards[i]
