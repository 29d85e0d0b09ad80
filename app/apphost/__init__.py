"""The App host: ODW's one engine driven by webhooks (see docs/architecture.md)."""
