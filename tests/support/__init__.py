"""Shared fakes, emulators and helpers for the whole suite (imported as
``tests.support.<module>``)."""
