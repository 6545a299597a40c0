"""The built-in engines, registered on import (one registration each).

``qnode`` (PennyLane devices) and ``statevector`` (the generator's sparse ADAPT
engine) reproduce the generator; ``sector`` (the determinant-space ADAPT engine)
and ``fast`` (the compiled statevector engine) are the project's own.  A new
engine is one module and one :func:`qencode_nb.engines.registry.register` call.
Importing this module imports nothing heavy.
"""

from __future__ import annotations

from qencode_nb.engines.fast.engine import FastEngine
from qencode_nb.engines.qnode.engine import QNodeEngine
from qencode_nb.engines.registry import register
from qencode_nb.engines.sector.engine import SectorEngine
from qencode_nb.engines.statevector.engine import StatevectorEngine

for _engine in (QNodeEngine(), StatevectorEngine(), SectorEngine(), FastEngine()):
    register(_engine.name, _engine)
