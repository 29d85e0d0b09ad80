"""Runner side: what action.yml runs on a GitHub Actions runner."""
