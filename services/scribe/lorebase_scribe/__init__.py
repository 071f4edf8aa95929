"""Scribe: background jobs."""
