"""Tests of the test servers themselves (tests/servers/)."""
