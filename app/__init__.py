"""ODW: a GitHub App that turns a repository's roadmap into landed commits."""

__version__ = "0.1.0"
