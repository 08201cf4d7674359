"""A thin command line over the library: ``python -m providerkit_nb <command>``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m providerkit_nb")
    sub = parser.add_subparsers(dest="command", required=True)
    dp = sub.add_parser("demo", help="the crash-and-resume story and the repair walkthrough")
    dp.add_argument("--child", metavar="STORE", help=argparse.SUPPRESS)
    dp.add_argument("--walkthrough", action="store_true", help="only the saved-file walkthrough")
    rp = sub.add_parser("replay", help="replay a recorded cassette through our adapters")
    rp.add_argument("cassette", help="a vcrpy YAML cassette")
    rp.add_argument("--transport", choices=("httpx", "requests"), default="httpx")
    rp.add_argument("--json", action="store_true", help="one JSON object per interaction")
    args = parser.parse_args(argv)
    if args.command == "replay":
        from .replay import main as replay_main

        return replay_main(args.cassette, args.transport, args.json)
    if args.command == "demo":
        from . import demo

        if args.child:
            return demo.story_child(args.child)
        if args.walkthrough:
            return demo.run_walkthrough()
        return demo.run_demo()
    parser.print_help(sys.stderr)
    return 2
