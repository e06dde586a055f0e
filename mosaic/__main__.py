"""``python -m mosaic``: the ``mosaic`` command, for an environment without its script on PATH."""

from mosaic.cli import main

main(prog_name="mosaic")
