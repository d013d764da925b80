"""`Loc`: where an IR node (or a parameter) came from in the user's source. Apart from
ir/nodes.py so that errors and cached signatures name places without loading the IR."""
from __future__ import annotations

from typing import Optional

from .batched_dataclass import dataclass  # (frozen classes, cheap to create)


@dataclass(frozen=True)
class Loc:
    """Where a node came from in the user's source."""

    filename: str
    lineno: int
    col: int = 0
    end_col: Optional[int] = None

    def __str__(self) -> str:
        return f"{self.filename}:{self.lineno}:{self.col + 1}"


NO_LOC = Loc("<unknown>", 0, 0)
