"""The two directions of I/O, by name: trace.READ and trace.WRITE index DIRECTIONS.

Below both the trace (which names its direction codes) and the label
vocabulary (``read_*``, ``write_*``), which each need them.
"""

from typing import Literal

Direction = Literal["read", "write"]
DIRECTIONS: tuple[Direction, ...] = ("read", "write")
