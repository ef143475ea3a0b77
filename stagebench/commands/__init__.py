"""The handlers of ``stagebench`` commands, one module each; their options are in
:mod:`stagebench.cli`, the option tables they read back in :mod:`stagebench.options`."""
