"""The interop suite's helpers: venvs with upstream TrustGraph 2.1.4 from PyPI."""
