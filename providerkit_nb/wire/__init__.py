"""The wires on paper: what each provider's request looks like, with no network.

One module per wire (``openai_chat``, ``openai_responses``, ``anthropic``, ``gemini``), each
holding everything that is that wire's shape and nothing that talks to a server:

- the canonical history to the wire's messages and back (``to_*`` / ``from_*``: messages, tools,
  tool results, reasoning items, files, images), so a transcript, a recording and a request
  read and write one way;
- ``OPTIONS``, the one table of where each call option (``options.CallOptions``) sits in the
  body; ``build_body`` writes it and ``import_request`` reads a recorded body back with it;
- ``RULES`` and ``check`` (and ``check_wire`` where a wire-shaped request can be checked as
  it is): what the provider would refuse, in its own words;
- ``SUPPORTS``: what the wire can carry (files, tool images, schemas, reasoning, JSON forms).

``validate.validate_history`` runs the generic rules and a wire's. The layers, bottom first:
``core`` (messages, repair, the generic rules) <- ``wire`` (this package: pure, imports only the
core) <- ``transport`` (HTTP, SSE, error kinds; knows no wire) <- ``providers`` (sends what a
wire builds, reads the stream back, learns what a server takes) <- everything above. What reads
or writes a wire's shape without sending it (transcripts, export, replay, ``dialects``) comes
here, never to ``providers``.
"""
