"""An entry on the compiled statevector engine (:mod:`qencode_nb.engines.fast.compiled`).

:func:`build` gives a :class:`FastProblem`: the Hamiltonian (the stored Pauli
terms when the entry has them, else the rebuilt tapered operator) as a CSR
matrix, and the ansatz as a gate list (HEA) or as the pool's Pauli words
(tapered UCCSD, the <= 12-qubit ADAPT pool).  Building the tapered pool
needs PennyLane's ``qchem.taper_operation`` (slow on large pools); its words
are kept in a small JSON file next to the rebuild cache, keyed by the
rebuild's cache key, so a warm cache builds the problem without PennyLane.

Which engine runs for ``engine="fast"`` is decided in one place,
:func:`qencode_nb.rerun.problem.build_problem`.
"""

from __future__ import annotations

from dataclasses import dataclass

from qencode_nb.errors import NotRunnable

#: Format of the pool-words cache file (bump when :func:`qencode_nb.engines.fast.compiled.pool_words` changes).
WORDS_CACHE_FORMAT = 2

#: Most tapered qubits the engine takes on: four state vectors of ``2**n``
#: complex amplitudes (16 MiB each at 20 qubits) and, above
#: :data:`~qencode_nb.engines.fast.compiled.CSR_MAX_QUBITS`, H·ψ term by term.
FAST_MAX_QUBITS = 20


@dataclass
class FastProblem:
    """What the fast engine needs.  Energies in Ha.

    Attributes:
        hamiltonian: :class:`qencode_nb.engines.fast.compiled.Hamiltonian`.
        hf_state: tapered HF bits, shape ``(n,)``.
        ansatz: hea, uccsd or adapt.
        reps: HEA repetitions (None otherwise).
        words: :func:`qencode_nb.engines.fast.compiled.pool_words` of the UCCSD
            circuit or the ADAPT pool (None for HEA).
        words_cache: "hit", "built" or "not cached" (no rebuild cache key).
        convention: how the stored angles act (``qencode_nb.engines.fast.compiled.ANGLE_FACTOR``):
            "qnode" (UCCSD, the QNode ADAPT engine) or "statevector".
        seconds: wall-clock seconds to build.
    """

    hamiltonian: object
    hf_state: list
    ansatz: str
    reps: int | None
    words: list | None
    words_cache: str | None
    convention: str = "qnode"
    seconds: float = 0.0

    def circuit(self, selected=None):
        """The :class:`~qencode_nb.engines.fast.compiled.Circuit` of the ansatz
        (ADAPT: of the selection ``selected``, pool indices)."""
        from qencode_nb.engines.fast import compiled as fe

        if self.ansatz == "hea":
            return fe.hea_circuit(self.hf_state, self.reps)
        if self.ansatz == "adapt" and selected is None:
            raise NotRunnable("an ADAPT circuit needs the selected operator indices")
        return fe.word_circuit(self.hf_state, self.words, selected, self.convention)

    def energy(self, selected=None):
        """:class:`~qencode_nb.engines.fast.compiled.Energy` of :meth:`circuit`."""
        from qencode_nb.engines.fast import compiled as fe

        return fe.Energy(self.circuit(selected), self.hamiltonian)

    def adapt_backend(self):
        """The ADAPT loop's backend (:class:`~qencode_nb.engines.fast.adapt.FastBackend`)."""
        from qencode_nb.engines.fast.adapt import FastBackend

        return FastBackend(self.hamiltonian, self.words, self.hf_state, self.convention)


def unfast_reason(entry) -> str | None:
    """Why ``entry`` cannot run on the compiled statevector engine, or None.

    The engine runs QEncode's HEA, tapered UCCSD and both ADAPT pools (single
    Pauli words at <= 12 untapered qubits, whole tapered excitations above)
    on up to :data:`FAST_MAX_QUBITS` tapered qubits.
    """
    n = entry.tapered_num_qubits
    if n > FAST_MAX_QUBITS:
        return (f"{n} tapered qubits: above {FAST_MAX_QUBITS} the state vectors of 2**n "
                "amplitudes are not held")
    return None


def _words(entry, rebuilt) -> tuple[list, str]:
    """The tapered pool as :func:`~qencode_nb.engines.fast.compiled.pool_words`, through
    the cache file ``words-<key>.json`` beside the rebuild cache; the status
    "hit", "built" or "not cached" (:func:`qencode_nb.hamiltonian.cache.side_file`)."""
    from qencode_nb.hamiltonian import cache

    chem, tap = rebuilt.chemistry, rebuilt.tapering

    def compute():
        from qencode_nb.engines.ansatz import tapered_uccsd_ops
        from qencode_nb.engines.fast.compiled import pool_words

        return {"words": pool_words(tapered_uccsd_ops(entry.active_space[0], tap.n_qubits_full,
                                                      tap.generators, tap.paulixops,
                                                      tap.z2_sectors))}

    material = {"rebuild_key": chem.cache_key, "kind": "tapered-pool-words",
                "format": WORDS_CACHE_FORMAT}
    doc, status = cache.side_file("words", material, compute, enabled=bool(chem.cache_key))
    # JSON keys are strings: wires back to int (built words pass through unchanged).
    return [{"words": [[{int(w): s for w, s in word.items()}, float(c)]
                       for word, c in d["words"]], "rule": d["rule"]}
            for d in doc["words"]], status


def _hamiltonian(entry, rebuilt):
    from qencode_nb.engines.fast.compiled import Hamiltonian

    n = entry.tapered_num_qubits
    if entry.has_stored_hamiltonian:
        return Hamiltonian.from_pauli_terms(entry.pauli_terms, n)
    tap = rebuilt.tapering
    return Hamiltonian.from_terms(tap.tapered_terms(), n)   # no PennyLane on a cache hit


def build(entry, rebuilt) -> FastProblem:
    """The fast-engine problem of an entry.

    Args:
        entry: :class:`qencode_nb.entry.model.Entry`.
        rebuilt: the :class:`~qencode_nb.hamiltonian.rebuild.Rebuilt` of
            :func:`qencode_nb.hamiltonian.check.rebuild`.

    Raises:
        NotRunnable: with the reason of :func:`unfast_reason`, or an operator the
            engine does not apply.
    """
    import time

    tap = rebuilt.tapering
    reason = unfast_reason(entry)
    if reason:
        raise NotRunnable(reason)
    start = time.perf_counter()
    words, status = (None, None) if entry.ansatz == "hea" else _words(entry, rebuilt)
    if entry.ansatz != "hea" and not words:
        raise NotRunnable("the tapered UCCSD pool is empty (the generator then builds HEA)")
    convention = "qnode" if entry.ansatz != "adapt" else (entry.optimizer.engine or "qnode")
    return FastProblem(hamiltonian=_hamiltonian(entry, rebuilt), convention=convention,
                       hf_state=[int(b) for b in entry.hf_tapered_state], ansatz=entry.ansatz,
                       reps=entry.reps if entry.ansatz == "hea" else None, words=words,
                       words_cache=status, seconds=time.perf_counter() - start)
