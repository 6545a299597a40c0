"""Two folders of executed audits compared entry by entry: what travels between hosts.

Per entry present in both folders: whether the re-run energies are bit-identical
(``float.hex``), ``|ΔE|`` (Ha), whether certification is the same, and whether the
numeric fingerprints (:mod:`qencode_nb.notebook.fingerprint`) differ, with the
OpenBLAS kernel triple of each side.  Two rates, after the Reproducible Builds
project's model of publishing reproduction rates: the bit-identical rate and the
certification-preserved rate, each over the entries both folders re-ran.
"""

from __future__ import annotations

from pathlib import Path

from qencode_nb.errors import QencodeNbError

#: The columns of :func:`compare_folders`, in order.
COLUMNS = ("entry_id", "status_a", "status_b", "energy_a", "energy_b", "bit_identical",
           "abs_delta_ha", "certified_a", "certified_b", "certification_same",
           "fingerprint_a", "fingerprint_b", "fingerprint_same", "kernels_a", "kernels_b")


def _runs(folder: Path) -> dict:
    """``{entry_id: records}`` of the executed audit notebooks of ``folder`` (the last
    notebook of an entry wins); raises when the folder has none."""
    from qencode_nb.notebook.record import read_records
    from qencode_nb.readout.manifest import audit_notebooks

    folder = Path(folder)
    if not folder.is_dir():
        raise QencodeNbError(f"compare: {folder} is not a folder of executed audits")
    runs = {}
    for path in audit_notebooks(folder):
        try:
            r = read_records(path)
        except Exception:   # noqa: BLE001  an unreadable notebook is a failed run
            continue
        if r.get("entry_id"):
            runs[r["entry_id"]] = r
    if not runs:
        raise QencodeNbError(f"compare: {folder} holds no executed audit notebook")
    return runs


def _side(r: dict) -> dict:
    from qencode_nb.notebook.fingerprint import kernel_triple

    numeric = (r.get("provenance") or {}).get("numeric") or {}
    energy = r.get("rerun_energy")
    return {"status": "done" if r.get("done") is True else "failed",
            "energy": energy if isinstance(energy, float) else None,
            "certified": r.get("certified"), "fingerprint": numeric.get("hash"),
            "kernels": kernel_triple(numeric) if numeric else None}


def compare_folders(folder_a, folder_b):
    """One row per entry audited in both folders (:data:`COLUMNS`).

    ``bit_identical``/``abs_delta_ha``/``certification_same`` are None where either
    side has no re-run energy (replay mode, a failed run), ``fingerprint_same`` where
    either side recorded no fingerprint.  Entries audited in one folder only are
    listed in ``table.attrs["only_in_one"]`` (``{entry_id: "A" or "B"}``).

    Raises:
        QencodeNbError: a folder that does not exist or holds no executed audit.
    """
    import pandas as pd

    a, b = _runs(folder_a), _runs(folder_b)
    rows = []
    only = sorted(set(a) ^ set(b))
    for entry_id in sorted(set(a) & set(b)):
        sa, sb = _side(a[entry_id]), _side(b[entry_id])
        both = sa["energy"] is not None and sb["energy"] is not None
        rows.append({
            "entry_id": entry_id, "status_a": sa["status"], "status_b": sb["status"],
            "energy_a": sa["energy"], "energy_b": sb["energy"],
            "bit_identical": (sa["energy"].hex() == sb["energy"].hex()) if both else None,
            "abs_delta_ha": abs(sa["energy"] - sb["energy"]) if both else None,
            "certified_a": sa["certified"], "certified_b": sb["certified"],
            "certification_same": (sa["certified"] == sb["certified"]) if both else None,
            "fingerprint_a": sa["fingerprint"], "fingerprint_b": sb["fingerprint"],
            "fingerprint_same": (sa["fingerprint"] == sb["fingerprint"]
                                 if sa["fingerprint"] and sb["fingerprint"] else None),
            "kernels_a": sa["kernels"], "kernels_b": sb["kernels"]})
    table = pd.DataFrame(rows, columns=list(COLUMNS)).astype(object)
    table.attrs["only_in_one"] = {e: "A" if e in a else "B" for e in only}
    return table.where(table.notna(), None)


def rates(table) -> dict:
    """``{"compared", "bit_identical", "bit_identical_rate", "certification_preserved",
    "certification_preserved_rate"}`` over the rows with a re-run on both sides
    (rates as fractions; None when nothing was compared)."""
    done = table[[v is not None for v in table["bit_identical"]]]
    n = len(done)
    bits = int(done["bit_identical"].astype(bool).sum())
    cert = int(done["certification_same"].astype(bool).sum())
    return {"compared": n, "bit_identical": bits,
            "bit_identical_rate": bits / n if n else None,
            "certification_preserved": cert,
            "certification_preserved_rate": cert / n if n else None}


def render(table, folder_a, folder_b) -> str:
    """The comparison as text: one line per entry, then both rates."""
    lines = [f"A: {folder_a}", f"B: {folder_b}"]
    fps = {(r.fingerprint_a, r.kernels_a, r.fingerprint_b, r.kernels_b)
           for r in table.itertuples()}
    for fa, ka, fb, kb in sorted(fps, key=str):
        lines.append(f"fingerprint A {fa} ({ka})  B {fb} ({kb})")
    lines.append(f"{'entry':<60} {'bits':>5} {'|dE| (Ha)':>10} {'cert A->B':>12} fp")
    for r in table.itertuples():
        bits = "-" if r.bit_identical is None else "same" if r.bit_identical else "diff"
        delta = "-" if r.abs_delta_ha is None else f"{r.abs_delta_ha:.2e}"
        cert = f"{_yn(r.certified_a)}->{_yn(r.certified_b)}"
        fp = "-" if r.fingerprint_same is None else "same" if r.fingerprint_same else "diff"
        lines.append(f"{r.entry_id[:60]:<60} {bits:>5} {delta:>10} {cert:>12} {fp}")
    for entry_id, side in sorted(table.attrs.get("only_in_one", {}).items()):
        lines.append(f"{entry_id[:60]:<60} only in {side}: not compared")
    rt = rates(table)
    if rt["compared"]:
        lines.append(f"bit-identical: {rt['bit_identical']} of {rt['compared']} "
                     f"({rt['bit_identical_rate']:.1%}); certification preserved: "
                     f"{rt['certification_preserved']} of {rt['compared']} "
                     f"({rt['certification_preserved_rate']:.1%})")
    else:
        lines.append("no entry has a re-run energy in both folders: no rate")
    return "\n".join(lines)


def _yn(value) -> str:
    return "-" if value is None else "yes" if value else "no"
