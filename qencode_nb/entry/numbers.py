"""Where an entry states each number the audit checks: its QEncode schema 4.0.0 path
and its ``params/`` YAML path (:func:`field_name`), for messages that name the field.
"""

from __future__ import annotations

#: ``(Entry attribute, QEncode schema 4.0.0 path, params YAML path)`` of every number
#: :mod:`qencode_nb.verdict.consistency` checks (energies in Ha).
NUMBERS = (
    ("published_energy", "results.vqe.best_energy_hartree", "published.energy_ha"),
    ("published_error", "results.quality.abs_vqe_exact_gap", "published.error_ha"),
    ("exact_ground_energy", "results.reference.exact_qubit_ground_energy_hartree",
     "published.exact_ground_energy_ha"),
    ("casci_energy", "results.reference.casci_ground_energy_hartree",
     "published.casci_energy_ha"),
    ("hf_energy", "results.reference.hf_energy_hartree", "published.hf_energy_ha"),
    ("threshold", "results.quality.gap_threshold", "published.threshold_ha"),
    ("bk_constant_correction_ha", "encoding.tapering.bk_constant_correction_ha",
     "encoding.bk_constant_correction_ha"),
)


def field_name(entry, attribute: str) -> str:
    """Where ``entry`` states ``attribute``: its QEncode schema 4.0.0 path for a
    JSON entry, its ``params/`` YAML path for a YAML one (the attribute itself when
    it is not one of :data:`NUMBERS`); an older schema's own path where its reader
    recorded one (``Entry.field_paths``)."""
    paths = getattr(entry, "field_paths", None) or {}
    if attribute in paths:
        return paths[attribute]
    for attr, json_path, yaml_path in NUMBERS:
        if attr == attribute:
            return yaml_path if getattr(entry, "kind", None) == "params-yaml" else json_path
    return attribute
