"""The command line: a thin layer that parses arguments and calls the library."""

from .main import main

__all__ = ["main"]
