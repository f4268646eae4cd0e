"""The one exception the CLI turns into a one-line message and exit code 2."""

from __future__ import annotations


class ConfigError(ValueError):
    """A mistake in a study configuration; the message starts with the key path."""
