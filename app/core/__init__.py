"""The pure core: roadmap model, selection, run state and policies. No I/O."""
