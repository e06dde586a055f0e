"""``python -m benchmarks.holdout OUT [--seeds N]``: the held-out corpus, scored (:mod:`mosaic.holdout`)."""

from mosaic.holdout.command import main

if __name__ == "__main__":
    main()
