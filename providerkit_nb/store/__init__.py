"""Stores: where a conversation's messages are saved as they happen."""
