"""Inbound edge: signature checks, delivery parsing into typed events, routing."""
