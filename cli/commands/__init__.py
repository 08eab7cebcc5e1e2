"""The commands, one module per group: each `register`s its subcommands' parsers beside their handlers."""
