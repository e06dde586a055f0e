"""Held-out ground truth: a second, independent generator of labelled Darshan logs.

``mosaic synth`` and the categorizer were written by the same team, so its
100 % proves little. This generator was written from the method's rules alone
(docs/method.md, sections 2, 3.3-3.7, 7), without reading ``mosaic/synth``, and builds
different shapes: desynchronized shared checkpoints, thousands of
file-per-process ranks, jittered and size-varying periods, two series in one
direction, long light log files, restarts, STDIO-only and DXT-traced apps,
2.x / big-endian / bzip2 / multi-stream logs, bytes near 100 MB, runs of
seconds and of a month, files every burst is appended to (only the HEATMAP
shows the bursts), seek-heavy readers and writers, two series at unrelated
periods.

Truth is computed, not guessed: temporality and metadata labels come from
this module's own implementation of SPEC 3.6 / 3.7 applied to the exact
records written, and a rule is asserted only when its outcome is at least
``Config.truth_margin`` (relative) away from its threshold. Periodicity
comes from the design: ``periodic`` is asserted only for a series of at
least five occurrences that makes up most segments of its direction, and
its absence only for random or one-off I/O; bursts appended to one file
are claimed from the heatmap bins written (3 or more, clearly one cluster).

Modules: :mod:`~mosaic.holdout.design` (records being designed, the
design's periodicity claim), :mod:`~mosaic.holdout.truth` (SPEC's rules),
:mod:`~mosaic.holdout.scenarios` (the table of scenarios: each row a shape
and its parameters, fixed or drawn per log), :mod:`~mosaic.holdout.writing`
(formats, extras, :func:`~mosaic.holdout.writing.generate`) and
:mod:`~mosaic.holdout.command`. Run: ``python -m mosaic.holdout OUT
[--seeds N]`` (or ``python -m benchmarks.holdout``) writes the logs and
``OUT/truth.jsonl``, runs the pipeline in-process and prints ``mosaic
eval``'s table.
"""
