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
    dp.add_argument("--child-url", help=argparse.SUPPRESS)
    dp.add_argument("--walkthrough", action="store_true", help="only the saved-file walkthrough")
    dp.add_argument("--local", action="store_true",
                    help="the story against a real model on this machine (the `local` extra)")
    rp = sub.add_parser("replay", help="replay a recorded cassette through our adapters")
    rp.add_argument("cassette", help="a vcrpy YAML cassette")
    rp.add_argument("--transport", choices=("httpx", "requests"), default="httpx")
    rp.add_argument("--json", action="store_true", help="one JSON object per interaction")
    ip = sub.add_parser(
        "inspect",
        help="what a provider would refuse in a transcript of any supported format",
        description="Exit status: 0 valid, 1 problems, 2 usage error or unreadable source.",
    )
    ip.add_argument("source", help="a transcript file, session database or DSN")
    ip.add_argument("--format", help="the source format, instead of detecting it")
    ip.add_argument("--thread", help="the thread / session / conversation to read from a source that holds "
                    "several (a providerkit store file: a conversation id)")
    ip.add_argument("--wire", help="check against this wire's rules instead of the source's")
    ip.add_argument("--json", action="store_true", help="print one JSON object")
    ip.add_argument("--html", metavar="OUT", help="also write the before/after repair report here")
    fp = sub.add_parser(
        "repair",
        help="write the repaired history as canonical JSONL (never in place)",
        description="Exit status: 0 valid as read, 1 had problems (repaired file written), 2 error.",
    )
    fp.add_argument("source", help="a transcript file, session database or DSN")
    fp.add_argument("-o", "--output", metavar="OUT", help="the JSONL file to write (not with a coding agent's --to)")
    fp.add_argument("--format", help="the source format, instead of detecting it")
    fp.add_argument("--thread", help="the thread / session to read from a source that holds several")
    fp.add_argument(
        "--to",
        choices=("canonical", "pydantic_ai", "langchain", "responses", "claude_code", "codex", "opencode", "cline"),
        default="canonical",
        help="write the framework's own JSON instead of canonical JSONL (pydantic_ai, langchain, responses), "
        "or a new session of the coding agent that wrote it, beside the original (claude_code, codex, opencode); "
        "cline: a new Cline session in OUT (a Cline data folder, or any folder)",
    )
    fp.add_argument("--read-only", metavar="TOOL,...",
                    help="the tools that only read (default: the coding agent's own read-only tools)")
    args = parser.parse_args(argv)
    if args.command in ("inspect", "repair"):
        from . import transcripts as transcript_cli

        if args.command == "inspect":
            return transcript_cli.inspect_command(
                args.source, format=args.format, thread=args.thread, wire=args.wire, as_json=args.json, html=args.html
            )
        agent = args.to in ("claude_code", "codex", "opencode")
        if agent and args.output:
            parser.error(
                f"-o/--output cannot be used with --to {args.to}: the new session is written beside the "
                f"original, where {args.to} finds it (drop -o; the command prints where it went)"
            )
        if not agent and args.read_only is not None:
            parser.error("--read-only is only used with --to claude_code, codex or opencode")
        if agent:
            return transcript_cli.repair_session_command(
                args.source, args.to, format=args.format, thread=args.thread,
                read_only=args.read_only.split(",") if args.read_only is not None else None,
            )
        if not args.output:
            parser.error("repair needs -o/--output (or --to claude_code|codex|opencode)")
        return transcript_cli.repair_command(
            args.source, args.output, format=args.format, thread=args.thread, to=args.to
        )
    if args.command == "replay":
        from ..testing.replay import main as replay_main

        return replay_main(args.cassette, args.transport, args.json)
    if args.command == "demo":
        from . import demo

        if args.child:
            return demo.story_child(args.child, args.child_url)
        if args.walkthrough:
            return demo.run_walkthrough()
        return demo.run_demo(local=args.local)
    parser.print_help(sys.stderr)
    return 2
