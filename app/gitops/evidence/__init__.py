"""Forge-neutral evidence from a clone: the repository on disk, the assessor and
salvager, the landing guard, and surviving task branches. Both hosts use these;
neither owns them."""
