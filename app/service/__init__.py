"""The service: workers that process the inbox, and the handlers they route to."""
