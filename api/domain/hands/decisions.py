"""Who decided a tie: the player, or the house once the tie was abandoned (`unfinished`)."""

from typing import Literal

DecidedBy = Literal["player", "timeout"]
