"""Inbound edge: signature checks, delivery parsing and routing."""
