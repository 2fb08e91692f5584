"""The boxed two-column table the ``tg-show-*`` commands print."""

from __future__ import annotations


def render_table(rows: list[tuple[str, str]]) -> str:
    """A plain two-column boxed table; multi-line values span several lines."""
    lines = [(label, value.splitlines() or [""]) for label, value in rows]
    left = max(len(label) for label, _ in lines)
    right = max(len(v) for _, vals in lines for v in vals)
    rule = f"+-{'-' * left}-+-{'-' * right}-+"
    out = [rule]
    for label, vals in lines:
        for i, v in enumerate(vals):
            out.append(f"| {(label if i == 0 else ''):<{left}} | {v:<{right}} |")
        out.append(rule)
    return "\n".join(out)
