"""The category vocabulary of SPEC 3.4-3.7, in a stable display order."""

TEMPORALITY = (
    "on_start",
    "on_end",
    "after_start",
    "before_end",
    "after_start_before_end",
    "on_start_and_end",
    "steady",
    "unclassified",
    "insignificant",
)
PERIODICITY = (
    "periodic",
    "periodic_second",
    "periodic_minute",
    "periodic_hour",
    "periodic_day_or_more",
    "periodic_low_busy_time",
    "periodic_high_busy_time",
)
METADATA = (
    "metadata_high_spike",
    "metadata_multiple_spikes",
    "metadata_high_density",
    "metadata_insignificant_load",
)

# Families scored by `mosaic eval` and shown in figures.
FAMILIES = {
    "read_temporality": tuple(f"read_{x}" for x in TEMPORALITY),
    "write_temporality": tuple(f"write_{x}" for x in TEMPORALITY),
    "read_periodicity": tuple(f"read_{x}" for x in PERIODICITY),
    "write_periodicity": tuple(f"write_{x}" for x in PERIODICITY),
    "metadata": METADATA,
}

ALL_LABELS = tuple(label for labels in FAMILIES.values() for label in labels)
