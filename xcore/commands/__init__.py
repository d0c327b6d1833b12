"""The `xcore` command line's commands, one module each (`xcore.cli` holds the parser and the dispatch).

`progress` and `arguments` are light (the parser and argument errors use them without pandas);
the other modules import what their command needs at module level, and `xcore.cli` imports them
only when their command runs.
"""

EXIT_OK, EXIT_INTERNAL, EXIT_BAD_INPUT = 0, 1, 2
EXIT_DISAGREE = 1
"""`xcore verify`: some explanation item moved its prediction against its stated direction."""
