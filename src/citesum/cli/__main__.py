"""``python -m citesum.cli``: the ``citesum`` command."""

from citesum.cli import main

main()
