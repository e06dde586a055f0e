"""The scenario table: every category of SPEC 3.4-3.7 and every eviction reason.

Rows are data (:class:`~mosaic.synth.scenarios.Scenario`); numbers given as
:class:`Range` vary by seed. Names say what each row is meant to exercise;
the truth of each generated log is still computed from what was written.
"""

from __future__ import annotations

from typing import Any

from mosaic.errors import Reason
from mosaic.synth.logs import INVALID_REASONS
from mosaic.synth.scenarios import Irregular, MetadataLoad, Periodic, Phase, Range, Scenario

COIN = Range(0, 1, log=False, integer=True)  # shared file or file per process
BIG = Range(2e9, 2e11)  # bytes of a significant phase
SMALL = Range(1e5, 5e7)  # bytes of an insignificant direction
RANKS = Range(4, 128, integer=True)
FEW_RANKS = Range(2, 16, integer=True)  # keeps data opens well below metadata thresholds
RUN = Range(900, 43200)
MANY_RANKS = Range(600, 1500, integer=True)  # a collective open: one high spike
EARLY_OPEN = Range(8, 10, log=False)  # seconds rank 0 opens a shared file before the others
DXT_BROKEN_REQUESTS = 4  # DXT_POSIX requests per record of the truncated / corrupt-stream logs

# Temporality: phases (start, duration as shares of the run; volume share).
SHAPES = {
    "on_start": ((0.0, 0.12, 1.0),),
    "on_end": ((0.88, 0.12, 1.0),),
    "after_start": ((0.26, 0.74, 1.0),),
    "before_end": ((0.0, 0.74, 1.0),),
    "after_start_before_end": ((0.3, 0.4, 1.0),),
    "on_start_and_end": ((0.0, 0.1, 0.5), (0.9, 0.1, 0.5)),
    "steady": ((0.0, 1.0, 1.0),),
    "unclassified": ((0.05, 0.15, 0.25), (0.55, 0.15, 0.75)),
}


def _temporality(direction: str) -> list[Scenario]:
    rows = [
        Scenario(
            f"{direction}_{label}",
            ranks=RANKS,
            run_time=RUN,
            volume=BIG,
            phases=tuple(Phase(direction, s, d, v, shared=COIN) for s, d, v in shape),
        )
        for label, shape in SHAPES.items()
    ]
    rows.append(
        Scenario(
            f"{direction}_insignificant",
            ranks=RANKS,
            run_time=RUN,
            phases=(Phase(direction, 0.3, 0.3, SMALL, shared=COIN),),
        )
    )
    return rows


# Periodicity magnitudes: (period range s, bursts, busy).
MAGNITUDES = {
    "second": (Range(3, 20), Range(20, 50, integer=True), Range(0.3, 0.6, log=False)),
    "minute": (Range(90, 1200), Range(8, 24, integer=True), Range(0.3, 0.6, log=False)),
    "hour": (Range(5400, 28800), Range(5, 8, integer=True), Range(0.3, 0.6, log=False)),
    "day_or_more": (Range(15 * 3600, 36 * 3600), Range(5, 6, integer=True), Range(0.3, 0.6, log=False)),
}
BURST = Range(2e8, 2e10)
# Training epochs reading samples, one seek per request: 100-1000 per open (real DLIO).
SEEK_EPOCHS = Periodic(
    "read",
    Range(60, 600),
    Range(0.2, 0.5, log=False),
    BURST,
    Range(6, 12, integer=True),
    shared=False,
    requests=Range(100, 1000, integer=True),
    seeks=True,
)


def _periodic(direction: str) -> list[Scenario]:
    rows = [
        Scenario(
            f"{direction}_periodic_{name}",
            ranks=RANKS,
            run_time=None,
            periodic=(Periodic(direction, period, busy, BURST, count, shared=COIN),),
        )
        for name, (period, count, busy) in MAGNITUDES.items()
    ]
    minute, count, _ = MAGNITUDES["minute"]
    rows += [
        Scenario(
            f"{direction}_periodic_low_busy",
            ranks=RANKS,
            run_time=None,
            periodic=(Periodic(direction, minute, Range(0.03, 0.15), BURST, count, shared=COIN),),
        ),
        Scenario(
            f"{direction}_periodic_high_busy",
            ranks=RANKS,
            run_time=None,
            periodic=(Periodic(direction, minute, Range(0.85, 0.93, log=False), BURST, count, shared=COIN),),
        ),
        Scenario(
            f"{direction}_periodic_jittered",
            ranks=RANKS,
            run_time=None,
            periodic=(Periodic(direction, minute, Range(0.2, 0.5), BURST, count, jitter=0.1, shared=COIN),),
        ),
    ]
    return rows


def _appended(
    name: str,
    direction: str,
    period: float | Range,
    busy: float | Range,
    count: float | Range,
    burst_bytes: float | Range = BURST,
    **periodic: Any,  # more fields of Periodic
) -> Scenario:
    """Bursts every rank appends to one file: one record per rank spans them all, and only
    the HEATMAP (formats 3.21 / 3.41) shows them."""
    return Scenario(
        name,
        ranks=FEW_RANKS,
        run_time=None,
        periodic=(Periodic(direction, period, busy, burst_bytes, count, append=True, **periodic),),
    )


SCENARIOS: tuple[Scenario, ...] = tuple(
    _temporality("read")
    + _temporality("write")
    + _periodic("read")
    + _periodic("write")
    + [
        # Two periodic behaviours in one direction: a big and a small series interleaved.
        Scenario(
            "write_two_periodic_series",
            ranks=RANKS,
            run_time=None,
            periodic=(
                Periodic(
                    "write",
                    Range(360, 1500),
                    Range(0.03, 0.08),
                    Range(2e9, 2e10),
                    Range(8, 16, integer=True),
                    offset=0.5,
                ),
                Periodic(
                    "write",
                    Range(360, 1500),
                    Range(0.02, 0.05),
                    Range(5e7, 2e8),
                    Range(8, 16, integer=True),
                    offset=0.5 + 1 / 3,
                ),
            ),
        ),
        # Periodic in both directions, at different magnitudes.
        # (Read gaps stay above 0.1 % of the run: closer bursts would merge, SPEC 3.3.)
        Scenario(
            "read_second_write_minute",
            ranks=RANKS,
            run_time=None,
            periodic=(
                Periodic("read", Range(8, 20), 0.3, Range(2e8, 1e9), 100, shared=True),
                Periodic("write", Range(120, 300), 0.3, BURST, 8, shared=COIN),
            ),
        ),
        # A typical simulation: read the input, checkpoint, write results at the end.
        Scenario(
            "simulation_checkpointing",
            ranks=RANKS,
            run_time=None,
            phases=(Phase("read", 0.0, 0.02, BIG, shared=True),),
            periodic=(
                Periodic(
                    "write",
                    Range(600, 1500),
                    Range(0.05, 0.15),
                    BURST,
                    Range(8, 16, integer=True),
                    shared=COIN,
                ),
            ),
        ),
        # Hard negatives: bursts at random times, of random sizes and lengths.
        Scenario(
            "write_irregular_bursts",
            ranks=RANKS,
            run_time=Range(3600, 86400),
            irregular=(Irregular("write", Range(6, 40, integer=True), (1e8, 1e10), (5, 300)),),
        ),
        Scenario(
            "read_irregular_bursts",
            ranks=RANKS,
            run_time=Range(3600, 86400),
            irregular=(Irregular("read", Range(6, 40, integer=True), (1e8, 1e10), (5, 300)),),
        ),
        # Metadata load.
        Scenario(
            "metadata_insignificant",
            ranks=FEW_RANKS,
            run_time=RUN,
            phases=(Phase("write", 0.5, 0.3, SMALL, shared=True),),
        ),
        Scenario(
            "metadata_high_spike",
            ranks=FEW_RANKS,
            run_time=RUN,
            phases=(Phase("write", 0.5, 0.3, SMALL, shared=True),),
            metadata=(MetadataLoad(0.3, 0.5, Range(700, 2000)),),
        ),
        Scenario(
            "metadata_multiple_spikes",
            ranks=FEW_RANKS,
            run_time=RUN,
            phases=(Phase("write", 0.5, 0.3, SMALL, shared=True),),
            metadata=(
                MetadataLoad(
                    0.1,
                    0.5,
                    Range(160, 400),
                    repeat=Range(6, 20, integer=True),
                    spacing=Range(10, 30, integer=True),
                ),
            ),
        ),
        Scenario(
            "metadata_high_density",
            ranks=FEW_RANKS,
            run_time=RUN,
            phases=(Phase("write", 0.5, 0.3, SMALL, shared=True),),
            metadata=(MetadataLoad(0.0, 0.0, Range(80, 200)),),
        ),
        # Repeated runs of one (user, application): exactly one is the heaviest.
        Scenario(
            "repeated_runs",
            ranks=RANKS,
            run_time=RUN,
            runs=Range(3, 8, integer=True),
            phases=(Phase("read", 0.0, 0.1, BIG, shared=True), Phase("write", 0.9, 0.1, BIG, shared=COIN)),
        ),
        Scenario(
            "partial_log",
            ranks=RANKS,
            run_time=RUN,
            partial=True,
            phases=(Phase("write", 0.85, 0.15, BIG, shared=COIN),),
        ),
        # Checkpoints appended to one file (SPEC 3.5 HEATMAP): one POSIX record per rank
        # spans every burst; only the heatmap (formats 3.21 / 3.41) shows the period.
        _appended(
            "write_periodic_appends_heatmap",
            "write",
            MAGNITUDES["minute"][0],
            Range(0.2, 0.5),
            Range(12, 24, integer=True),
        ),
        # Few of them, clean gaps between them (SPEC 3.5 heatmap bursts): 3-8 periods,
        # where the FFT is seldom far beyond chance; busy time from the bins.
        _appended(
            "write_appended_few_checkpoints",
            "write",
            Range(6, 7200),
            Range(0.05, 0.9, log=False),
            Range(3, 8, integer=True),
            jitter=0.05,
            offset=Range(0.2, 1.0, log=False),
        ),
        # DLIO-like training epochs: every rank reads its dataset file in a burst per epoch
        # (real dlio_logs/ "B" readers: 4 s of reading every ~8 s, five epochs).
        _appended(
            "read_appended_epochs",
            "read",
            Range(6, 25),
            Range(0.35, 0.65, log=False),
            Range(4, 8, integer=True),
            jitter=0.06,
        ),
        # Their negatives: nothing periodic shows in any signal Darshan keeps.
        Scenario(  # one steady append: every bin of the span holds writes
            "write_appended_continuous",
            ranks=FEW_RANKS,
            run_time=RUN,
            phases=(
                Phase("write", Range(0.0, 0.1, log=False), Range(0.8, 0.9, log=False), BIG, append=True),
            ),
        ),
        # An initial and a final snapshot: two equal bursts are no period.
        _appended(
            "write_appended_two_checkpoints",
            "write",
            Range(300, 7200),
            Range(0.05, 0.3),
            2,
            offset=Range(0.2, 0.5, log=False),
        ),
        Scenario(  # random on/off traffic
            "write_appended_random_bursts",
            ranks=FEW_RANKS,
            run_time=Range(3600, 86400),
            irregular=(Irregular("write", Range(6, 40, integer=True), (1e8, 1e10), (5, 300), append=True),),
        ),
        # Bursts every 0.5 s (5 bins of 0.1 s): request cadence, under min_period_seconds.
        _appended(
            "write_appended_subsecond",
            "write",
            0.5,
            Range(0.2, 0.6, log=False),
            Range(40, 90, integer=True),
            burst_bytes=Range(1e7, 5e8),
        ),
        # Metadata without seeks (SPEC 3.7): DLIO-style epochs of sample reads with a seek
        # before every request, 100-1000 per open; seeks reach no metadata server.
        Scenario(
            "read_seek_heavy_epochs",
            ranks=FEW_RANKS,
            run_time=None,
            periodic=(SEEK_EPOCHS,),
        ),
        # The contrast: an index of small files opened at start makes the spike; the
        # seeks, counted, would add one spike per epoch (multiple spikes).
        Scenario(
            "metadata_spike_seek_heavy",
            ranks=FEW_RANKS,
            run_time=None,
            periodic=(SEEK_EPOCHS,),
            metadata=(MetadataLoad(0.0, 0.5, Range(700, 2000)),),
        ),
        # Two interleaved series at unrelated periods (real pub_two_series: 2 MiB logs every
        # 5 s, 48 MiB checkpoints every 47 s): the heavier, rarer checkpoints are dominant.
        Scenario(
            "write_two_series_unrelated_periods",
            ranks=FEW_RANKS,
            run_time=None,
            periodic=(
                Periodic(
                    "write",
                    Range(66, 150),
                    Range(0.001, 0.005),
                    Range(1.5e10, 5e10),
                    Range(5, 9, integer=True),
                ),
                Periodic("write", Range(3, 6), Range(0.02, 0.1), Range(4e6, 4e7), count=0, offset=0.3),
            ),
        ),
        # The same at closer periods and volumes: the logs cut the checkpoints' segments at
        # lengths that repeat, so mean shift splits the checkpoints into clusters of a few
        # occurrences, each lighter than the logs' cluster; the series is still dominant.
        Scenario(
            "write_two_series_split_clusters",
            ranks=FEW_RANKS,
            run_time=None,
            periodic=(
                Periodic(
                    "write",
                    Range(40, 60),
                    Range(0.001, 0.004),
                    Range(4e8, 6e8),
                    Range(15, 20, integer=True),
                ),
                Periodic("write", Range(4, 6), Range(0.03, 0.08), Range(1.5e7, 2.5e7), count=0, offset=0.3),
            ),
        ),
        # DXT request cadence (SPEC 3.4 min_period_seconds): one input phase whose traced
        # requests come every 0.1-0.5 s is no period.
        Scenario(
            "read_dxt_request_cadence",
            ranks=FEW_RANKS,
            run_time=Range(60, 120),
            dxt=Range(48, 120, integer=True),
            dxt_busy=0.5,
            phases=(Phase("read", 0.0, 0.2, BIG, shared=True),),
        ),
        # Collective opens (SPEC 3.7): 600-1,500 ranks open a shared output file together
        # (one MPI-IO record), rank 0 also 8-10 s before them, so the POSIX record's open
        # window spans 8-10 s (60-190 opens/s spread: five or more spikes) where the opens
        # took a fraction of one second: one high spike (opens and closes), no more.
        Scenario(
            "metadata_collective_open",
            ranks=MANY_RANKS,
            run_time=RUN,
            phases=(Phase("write", 0.5, 0.3, BIG, shared=True, early_open=EARLY_OPEN, collective=True),),
        ),
        # Its negative: the same record without an MPI-IO one (independent opens at any time
        # of the window): spread, they are 60-190 opens/s for 8-10 s, multiple spikes.
        Scenario(
            "metadata_independent_open_window",
            ranks=MANY_RANKS,
            run_time=RUN,
            phases=(Phase("write", 0.5, 0.3, BIG, shared=True, early_open=EARLY_OPEN),),
        ),
        # DLIO "A"-like epochs (SPEC 3.5): the first epoch read in two parts (35-65 % of it,
        # then the rest) one empty heatmap bin apart; 4-6 epochs, so without joining them
        # fewer than 75 % of the bursts are alike.
        _appended(
            "read_appended_epochs_split",
            "read",
            Range(6, 25),
            Range(0.35, 0.65, log=False),
            Range(4, 6, integer=True),
            jitter=0.06,
            split=Range(0.35, 0.65, log=False),
        ),
        # Its negative: 6-30 bursts at random times, sizes and lengths (40-400 s), each in two
        # halves one empty bin apart: joined or not, no period.
        Scenario(
            "write_appended_random_split_bursts",
            ranks=FEW_RANKS,
            run_time=Range(1800, 7200),  # bins of 6.4-25.6 s: each half holds whole bins
            irregular=(
                Irregular(
                    "write", Range(6, 30, integer=True), (1e8, 1e10), (40, 400), append=True, split=True
                ),
            ),
        ),
        # Partial POSIX module (SPEC 2): the big files' POSIX records were lost, only MPI-IO
        # records keep them; without the stand-ins the writes look insignificant.
        Scenario(
            "partial_posix_lost_files",
            ranks=FEW_RANKS,
            run_time=RUN,
            partial=True,
            phases=(
                Phase("write", 0.0, 0.1, SMALL, shared=True),
                Phase("write", 0.85, 0.15, BIG, shared=COIN, lost=True),
            ),
        ),
    ]
    + [
        Scenario(
            f"invalid_{reason}",
            ranks=FEW_RANKS,
            run_time=RUN,
            invalid=reason,
            phases=(Phase("write", 0.5, 0.3, BIG, shared=True),),
            # a broken region may be the DXT_POSIX one (logs.invalid_log)
            dxt=DXT_BROKEN_REQUESTS if reason in (Reason.TRUNCATED, Reason.CORRUPT_STREAM) else 0,
        )
        for reason in INVALID_REASONS
    ]
)

BY_NAME = {s.name: s for s in SCENARIOS}
