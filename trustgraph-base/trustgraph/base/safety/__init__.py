"""What keeps bad input and secrets in their place.

* :mod:`.limits`: bounds on what a request may contain, and the JSON decoding
  that enforces them;
* :mod:`.secrets`: remembering secret values and scrubbing them from text and
  child environments;
* :mod:`.logsafe`: log lines that a request cannot forge, flood or fill with
  secrets.
"""
