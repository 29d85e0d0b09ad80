"""Local mode: the whole engine on a clone whose origin is the forge (`odw run --local`)."""
