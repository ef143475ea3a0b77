"""The subcommands' argparse parsers, one module per group of commands; the ``stagebench``
parser itself is built in :mod:`stagebench.cli`."""
