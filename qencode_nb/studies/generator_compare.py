"""What the generator study compares, and the class of a miss (issue 59).

Three results of one entry meet here: the **published** one (the entry), the
**generator's** here (QEncode's own ``generate_entry_v4.py`` at the recorded commit, run
in the same stack, kernels and threads) and **qencode-nb's** re-run here from the stored
Hamiltonian; where the generator's rebuilt Hamiltonian is not the stored one, also
qencode-nb's re-run **given the generator's Hamiltonian** (the entry the generator
assembled, audited).  Each is a dict ``{"energy": float (Ha), "nfev": int, "restarts":
int, "params": [float] (radians)}`` or None where the run failed.

- :func:`hamiltonian_difference`: stored vs generator's terms, coefficient by coefficient.
- :func:`first_divergence`: where two evaluation logs
  (:func:`qencode_nb.rerun.evaluation_log.read_log`) part, and which input differed
  there: ``x`` (the optimiser asked for another point) or ``Hamiltonian`` (the same x gave
  another energy: the operator, or the arithmetic, differed).
- :func:`classify`: the class (:data:`CLASSES`), decided in this order:

  1. ``reproduced``: the generator and qencode-nb both give the published energy to the
     last bit;
  2. ``outside the record`` (the generator's own): the entry the generator assembled here
     does not replay its own energy on its own stored Hamiltonian: the operator it
     optimised is not the one it records, so no re-run from the record can follow it;
  3. ``ours``: qencode-nb given the generator's Hamiltonian (the stored one where the two
     are equal to the bit) does not give the generator's energy: qencode-nb's VQE is not
     the generator's here, a defect of ours;
  4. ``chemistry``: the generator's rebuilt Hamiltonian differs from the stored one and
     qencode-nb given it gives the generator's energy: the chemistry stage does not
     travel, the VQE is innocent;
  5. ``outside the record``: the Hamiltonians are equal, qencode-nb and the generator
     agree, and both miss the published bits: the record lacks something;
  6. ``undecided``: a run failed or gave no energy (the reason says which).

Importing this module imports no numpy.
"""

from __future__ import annotations

from qencode_nb.rerun.compare import ulp_distance

#: The classes of a miss, in the order :func:`classify` decides them.
CLASSES = ("reproduced", "ours", "chemistry", "outside the record", "undecided")


def _bits(value) -> str | None:
    return None if value is None else float(value).hex()


def same_bits(a, b) -> bool:
    """Two energies (Ha) equal to the last bit (both given)."""
    return a is not None and b is not None and _bits(a) == _bits(b)


def ulps(a, b) -> int | None:
    """Representable doubles between two energies (Ha); None where one is missing."""
    return None if a is None or b is None else ulp_distance(float(a), float(b))


def hamiltonian_difference(stored, generated) -> dict:
    """Stored vs generator-rebuilt qubit Hamiltonian, term by term.

    Args:
        stored, generated: QEncode ``pauli_terms`` lists (``[{"pauli_string": str,
            "coefficient": float (Ha)}]``), the entry's and the generator's.

    Returns:
        ``{"terms": len(stored), "generated_terms": len(generated), "strings_equal":
        the same Pauli strings, "order_equal": in the same order, "coefficients_differing":
        terms whose coefficients are not equal to the bit (a string in one only counts),
        "largest_difference_ha": the largest |difference| over the common strings,
        "identical": same strings, order and every coefficient to the bit}``.
    """
    a = [(t["pauli_string"], float(t["coefficient"])) for t in stored or []]
    b = [(t["pauli_string"], float(t["coefficient"])) for t in generated or []]
    da, db = dict(a), dict(b)
    common = set(da) & set(db)
    differing = sum(1 for k in common if _bits(da[k]) != _bits(db[k]))
    differing += len(set(da) ^ set(db))
    largest = max((abs(da[k] - db[k]) for k in common), default=0.0)
    order_equal = [k for k, _ in a] == [k for k, _ in b]
    return {"terms": len(a), "generated_terms": len(b), "strings_equal": set(da) == set(db),
            "order_equal": order_equal, "coefficients_differing": differing,
            "largest_difference_ha": largest,
            "identical": order_equal and differing == 0}


def first_divergence(left: list, right: list) -> dict:
    """Where two evaluation logs part.

    Args:
        left, right: :func:`qencode_nb.rerun.evaluation_log.read_log` lists (``x`` a
            tuple of hex strings, ``energy`` a hex string), in evaluation order.

    Returns:
        ``{"evaluation": the first 1-based evaluation where they differ (None: they agree
        at every one), "input": "x" (the points differ there), "Hamiltonian" (the same
        point gave another energy) or "length" (one log ends first; None when they agree),
        "compared": evaluations compared, "left_energy", "right_energy": the two energies
        there (hex, None past a log's end)}``.
    """
    n = min(len(left), len(right))
    for i in range(n):
        x_equal = tuple(left[i]["x"]) == tuple(right[i]["x"])
        if not x_equal or left[i]["energy"] != right[i]["energy"]:
            return {"evaluation": i + 1, "input": "Hamiltonian" if x_equal else "x",
                    "compared": i + 1, "left_energy": left[i]["energy"],
                    "right_energy": right[i]["energy"]}
    if len(left) != len(right):
        return {"evaluation": n + 1, "input": "length", "compared": n,
                "left_energy": left[n]["energy"] if n < len(left) else None,
                "right_energy": right[n]["energy"] if n < len(right) else None}
    return {"evaluation": None, "input": None, "compared": n, "left_energy": None,
            "right_energy": None}


def classify(published: float, generator: dict | None, ours: dict | None,
             given: dict | None, hamiltonian: dict | None, *,
             environment: str | None = None,
             generator_replay: dict | None = None) -> tuple[str, str]:
    """``(class, reason)`` of one entry (module docstring for the order).

    Args:
        published: the published energy (Ha).
        generator: the generator's result here (``energy``, ``nfev``, ``restarts``,
            ``params``), None where it failed.
        ours: qencode-nb's re-run from the stored Hamiltonian, None where it failed.
        given: qencode-nb's re-run given the generator's Hamiltonian; None where the two
            Hamiltonians are equal to the bit (``ours`` is that run) or it failed.
        hamiltonian: :func:`hamiltonian_difference` of stored vs generator's, None where
            the generator assembled no entry.
        environment: what of the recorded environment the runs were not in (the stack,
            the kernels), or None: an ``outside the record`` reason then names it as the
            first suspect.
        generator_replay: ``{"identical", "ulps"}`` (or ``{"identical": None, "reason"}``
            where qencode-nb cannot replay it, said with ``ours``): the generator's own entry's optimum
            replayed on its own stored Hamiltonian against its own energy (the audit of
            that entry), or None where not run.  Not identical: the operator the generator
            optimised is not the one it stores, so no re-run from a stored Hamiltonian
            can follow it: ``outside the record`` (decided before ``ours``).
    """
    g = (generator or {}).get("energy")
    q = (ours or {}).get("energy")
    if g is None or q is None or hamiltonian is None:
        failed = [name for name, v in (("the generator", g), ("qencode-nb's re-run", q))
                  if v is None]
        return "undecided", " and ".join(failed or ["the generator's entry"]) + \
            " gave no energy"
    if same_bits(g, published) and same_bits(q, published):
        return "reproduced", "the generator and qencode-nb both give the published bits here"
    if generator_replay is not None and generator_replay.get("identical") is False:
        return "outside the record", (
            f"the generator's own entry does not hold its energy: its optimum replays "
            f"{generator_replay.get('ulps') or 0:,} ulps from it on the Hamiltonian it "
            "stores, so the operator it optimised is not the one it records")
    equal_h = hamiltonian["identical"]
    beside = ours if equal_h else given
    b = (beside or {}).get("energy")
    if b is None:
        return "undecided", "qencode-nb's re-run given the generator's Hamiltonian failed"
    which = "the same Hamiltonian (stored = rebuilt)" if equal_h else \
        "the generator's Hamiltonian"
    if not same_bits(b, g):
        why = (f"; the generator's own entry cannot be replayed here: "
               f"{generator_replay['reason']}"
               if (generator_replay or {}).get("reason") else "")
        return "ours", (f"given {which}, qencode-nb ends {_ulps_text(b, g)} from the "
                        f"generator: its VQE is not the generator's here{why}")
    if not equal_h:
        own = ("; qencode-nb's re-run from the stored Hamiltonian gives the published bits"
               if same_bits(q, published) else "")
        return "chemistry", (f"the generator's rebuilt Hamiltonian differs from the stored "
                             f"one ({hamiltonian['coefficients_differing']} of "
                             f"{hamiltonian['terms']} coefficients, largest "
                             f"{hamiltonian['largest_difference_ha']:.2g} Ha) and qencode-nb "
                             f"given it gives the generator's bits{own}")
    lacks = (f"first suspect: {environment}" if environment
             else "the record lacks something")
    return "outside the record", (f"same Hamiltonian, qencode-nb and the generator agree, "
                                  f"both {_ulps_text(g, published)} from the published "
                                  f"energy: {lacks}")


def _ulps_text(a, b) -> str:
    n = ulps(a, b)
    return f"{n:,} ulp" + ("" if n == 1 else "s")


def constant_added(published: float, generator: dict | None, entry, generated_entry) -> bool:
    """The generator's energy (Ha) plus the stored entry's tapering constant
    (``bk_constant_correction_ha``) is the published energy to the bit, where the entry the
    generator assembled carries no constant: the published entry records a correction its
    recorded commit does not add (QEncode v3.1's LiH 6-31G BK entries at ``dff47f8``).  The
    bit is the sum's: where the constant is the larger, the sum's last bit spans several of
    the generator's energy's (LiH 6-31G BK: 8.9e-16 Ha, 16 of them)."""
    constant = getattr(entry, "bk_constant_correction_ha", None)
    g = (generator or {}).get("energy")
    if g is None or not constant or generated_entry is None \
            or getattr(generated_entry, "bk_constant_correction_ha", None):
        return False
    return same_bits(float(g) + float(constant), published)
