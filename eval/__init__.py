"""Groundedness evaluation harness: labelled cases on a simulated web, scored per mode (see eval/README.md)."""
