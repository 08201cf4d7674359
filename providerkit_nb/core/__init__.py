"""The core: messages, turn assembly, repair, validation, tools, errors. No network here."""
