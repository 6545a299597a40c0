"""Which tapered excitation generators QEncode's > 12-qubit pool keeps.

The generator (``_get_tapered_uccsd_ops``, ``scripts/generate_entry_v4.py``) builds
each tapered generator ``G`` as a ``2**n x 2**n`` CSR matrix ``M``, drops it when
``M`` has no structural non-zero, and keeps it only when ``B = 2iM`` satisfies
``max|B**3 + B| <= B_CUBED_TOL`` (:data:`qencode_nb.rules.B_CUBED_TOL`), the
condition of the closed-form exponential.  :func:`keeps_by_matrix` is that rule as
written (the slow twin: three sparse products on ``2**18`` rows for H10).

:func:`keeps` reaches the same decision on the Pauli words.  For a Pauli sum
``S = sum_k a_k P_k`` on ``n`` qubits the largest matrix entry obeys

    max_k |a_k|  <=  max_ij |S_ij|  <=  sum_k |a_k|

(right: each ``P_k`` has entries of modulus 1 or 0; left: the words of ``S`` that
flip the same bits ``x`` fill one permuted diagonal whose entries, as functions of
the row, are a combination of the distinct characters ``(-1)**popcount(b & z)``, so
their mean square is ``sum |a_k|**2`` over those words).  Applied to ``G`` itself
(no non-zero entry iff every coefficient is 0) and to ``S = (2i)**3 G**3 + 2i G``,
the bounds decide whenever they fall on one side of the tolerance with a margin of
:data:`~qencode_nb.rules.B_CUBED_BOUND_MARGIN`; otherwise, and wherever ``G`` carries a
coefficient so small that the matrix sums could round it away
(:data:`~qencode_nb.rules.B_CUBED_TINY_COEFFICIENT`), :func:`keeps` asks
:func:`keeps_by_matrix`.
A pool operator's bits do not depend on this check (the kept operator is ``G``
itself); ``tests/engines/test_excitation_check.py`` compares both on every
excitation of the H8 pool and across the tolerance.
"""

from __future__ import annotations

from qencode_nb.rules import B_CUBED_BOUND_MARGIN, B_CUBED_TINY_COEFFICIENT, B_CUBED_TOL


def keeps_by_matrix(generator, wires) -> bool:
    """The generator's rule on the CSR matrix of ``generator`` (the slow twin).

    Args:
        generator: a tapered excitation generator ``G`` with a ``pauli_rep``.
        wires: the tapered wire order, length ``n`` (matrix ``2**n x 2**n``).

    Returns:
        True when ``M`` has a structural non-zero and ``B = 2iM`` satisfies
        ``max|B**3 + B| <= B_CUBED_TOL``.
    """
    from qencode_nb.engines.statevector.sparse import pauli_csr

    M = pauli_csr(generator, wires)
    if M.nnz == 0:
        return False
    B = (2j * M).tocsr()
    return not abs(B @ B @ B + B).max() > B_CUBED_TOL


def keeps(generator, wires) -> bool:
    """:func:`keeps_by_matrix`'s decision, from the Pauli words where the bounds of the
    module docstring settle it (milliseconds instead of sparse products on
    ``2**n`` rows).

    Args:
        generator: a tapered excitation generator ``G`` with a ``pauli_rep``.
        wires: the tapered wire order (used only when the matrix decides).

    Raises:
        ValueError: ``generator`` has no ``pauli_rep``.
    """
    sentence = generator.pauli_rep
    if sentence is None:
        raise ValueError(f"{generator!r} has no Pauli representation")
    sizes = [abs(c) for c in sentence.values()]
    if not any(sizes):
        return False                       # every entry exactly zero: no non-zero
    if any(0 < s < B_CUBED_TINY_COEFFICIENT for s in sizes):
        return keeps_by_matrix(generator, wires)
    B = sentence * 2j
    residual = [abs(c) for c in (B @ B @ B + B).values()]
    if sum(residual) * B_CUBED_BOUND_MARGIN <= B_CUBED_TOL:
        return True
    if max(residual, default=0.0) > B_CUBED_BOUND_MARGIN * B_CUBED_TOL:
        return False
    return keeps_by_matrix(generator, wires)
