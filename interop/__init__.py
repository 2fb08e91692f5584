"""The interop suite's helpers (issue 14): venvs with upstream TrustGraph 2.1.4 from PyPI."""
