"""Placeholder: the Messages-API emulator is being written (issue 3)."""
