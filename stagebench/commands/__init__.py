"""The handlers of ``stagebench`` commands, one module each; their options are in
:mod:`stagebench.cli`."""
