"""Providers that wrap providers: gate, watchdog, retry, key pool, token."""
