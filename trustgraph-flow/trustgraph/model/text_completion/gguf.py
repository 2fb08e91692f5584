"""Whether a file is a model llama.cpp can load: a GGUF file.

Checked before the model is handed to llama.cpp, by text-completion-llamacpp
and by tg-launch at its start: llama.cpp's own answer to a wrong file is
"Failed to init server, please check the input params", and under tg-launch
that would be a child dying and restarting five times before anyone read why.
Kept apart from the service so that tg-launch need not import it.
"""

from __future__ import annotations

import os
from pathlib import Path

#: The first four bytes of every GGUF file (its format's magic number).
MAGIC = b"GGUF"


def model_file_problem(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` is not a GGUF model file llama.cpp could load, or None when it is one."""
    p = Path(path)
    if not p.exists():
        return f"model file {path} does not exist; give --model the path of a GGUF file"
    if not p.is_file():
        return f"model file {path} is not a file; give --model the path of a GGUF file"
    try:
        with p.open("rb") as f:
            head = f.read(len(MAGIC))
    except OSError as e:
        return f"model file {path} cannot be read: {e.strerror or e}"
    if head != MAGIC:
        return (f"model file {path} is not a GGUF file (llama.cpp runs GGUF models: download the model "
                f"in GGUF form, or convert it with llama.cpp's convert_hf_to_gguf.py)")
    return None
