"""``python -m mosaic.holdout OUT [--seeds N]``."""

from mosaic.holdout.command import main

main()
