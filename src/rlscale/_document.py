"""A tiny document model rendered to Markdown and to self-contained HTML.

Reports are built once as a list of blocks and rendered twice, so
``index.md`` and ``index.html`` always say the same thing.  The HTML embeds
figures as base64 PNG data URIs: the file can be mailed on its own.

Examples
--------
>>> doc = Document("Demo")
>>> doc.paragraph("Gain grows like √K.")
>>> doc.table(["K", "gain"], [[0.5, 1.0], [2.0, 2.0]])
>>> print(doc.to_markdown())
# Demo
<BLANKLINE>
Gain grows like √K.
<BLANKLINE>
| K | gain |
|---|---|
| 0.5 | 1 |
| 2 | 2 |
<BLANKLINE>
>>> html = doc.to_html()
>>> "<table>" in html, '<td class="num">0.5</td>' in html
(True, True)
"""

from __future__ import annotations

import base64
import html
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Document", "format_value"]

# A table cell that reads as a number (as format_value writes them, or an interval).
_NUMBER = re.compile(r"[-+−]?(\d[\d.]*(e[-+]?\d+)?|∞|nan)|\[.*\]")


def format_value(value: Any, digits: int = 4) -> str:
    """Format a number for a reader: ``digits`` significant figures.

    Infinities are ``∞``/``−∞`` and a missing value (``None``) is ``—``.

    Examples
    --------
    >>> [format_value(v) for v in (0.123456, 12, float("-inf"), None, float("nan"), True)]
    ['0.1235', '12', '−∞', '—', 'nan', 'True']
    """
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        value = value.item()
    if value is None:
        return "—"
    if isinstance(value, bool) or not isinstance(value, float | int):
        return str(value)
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    return f"{value:.{digits}g}"


@dataclass
class _Block:
    kind: str
    data: dict[str, Any] = field(default_factory=dict)


class Document:
    """An ordered list of headings, paragraphs, tables, figures and code."""

    def __init__(self, title: str) -> None:
        self.title = title
        self.blocks: list[_Block] = []

    def heading(self, text: str, level: int = 2) -> None:
        self.blocks.append(_Block("heading", {"text": text, "level": level}))

    def paragraph(self, text: str) -> None:
        self.blocks.append(_Block("paragraph", {"text": text}))

    def bullets(self, items: list[str]) -> None:
        self.blocks.append(_Block("bullets", {"items": list(items)}))

    def code(self, text: str) -> None:
        self.blocks.append(_Block("code", {"text": text}))

    def table(self, headers: list[str], rows: list[list[Any]], digits: int = 4) -> None:
        cells = [[format_value(v, digits) for v in row] for row in rows]
        self.blocks.append(_Block("table", {"headers": list(headers), "rows": cells}))

    def figure(self, path: str | Path, caption: str) -> None:
        """Add a PNG figure; ``path`` is relative to the report directory."""
        self.blocks.append(_Block("figure", {"path": str(path), "caption": caption}))

    # -- rendering ---------------------------------------------------------

    def to_markdown(self) -> str:
        out = [f"# {self.title}", ""]
        for block in self.blocks:
            d = block.data
            if block.kind == "heading":
                out += ["#" * d["level"] + " " + d["text"], ""]
            elif block.kind == "paragraph":
                out += [d["text"], ""]
            elif block.kind == "bullets":
                out += [f"- {item}" for item in d["items"]] + [""]
            elif block.kind == "code":
                out += ["```", d["text"].rstrip("\n"), "```", ""]
            elif block.kind == "table":
                # A "|" inside a cell would end it early.
                out.append("| " + " | ".join(c.replace("|", "\\|") for c in d["headers"])
                           + " |")
                out.append("|" + "---|" * len(d["headers"]))
                out += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |"
                        for row in d["rows"]]
                out.append("")
            elif block.kind == "figure":
                out += [f"![{d['caption']}]({d['path']})", "", f"*{d['caption']}*", ""]
        return "\n".join(out)

    def to_html(self, base: str | Path | None = None) -> str:
        """Render HTML; figures are read from ``base / path`` and embedded."""
        esc = html.escape
        body = [f"<h1>{esc(self.title)}</h1>"]
        for block in self.blocks:
            d = block.data
            if block.kind == "heading":
                level = min(int(d["level"]), 6)
                body.append(f"<h{level}>{esc(d['text'])}</h{level}>")
            elif block.kind == "paragraph":
                body.append(f"<p>{esc(d['text'])}</p>")
            elif block.kind == "bullets":
                items = "".join(f"<li>{esc(item)}</li>" for item in d["items"])
                body.append(f"<ul>{items}</ul>")
            elif block.kind == "code":
                body.append(f"<pre><code>{esc(d['text'])}</code></pre>")
            elif block.kind == "table":
                head = "".join(f"<th>{esc(h)}</th>" for h in d["headers"])
                # Numbers align right (digits under digits), words left.
                rows = "".join(
                    "<tr>" + "".join(
                        f'<td class="num">{esc(c)}</td>' if _NUMBER.fullmatch(c)
                        else f"<td>{esc(c)}</td>" for c in row) + "</tr>"
                    for row in d["rows"]
                )
                body.append(f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>")
            elif block.kind == "figure":
                src = esc(d["path"])
                if base is not None and (Path(base) / d["path"]).is_file():
                    data = base64.b64encode((Path(base) / d["path"]).read_bytes()).decode()
                    src = f"data:image/png;base64,{data}"
                body.append(
                    f'<figure><img src="{src}" alt="{esc(d["caption"])}">'
                    f"<figcaption>{esc(d['caption'])}</figcaption></figure>"
                )
        style = (
            "body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;"
            "padding:0 1rem;line-height:1.45;color:#222}"
            "table{border-collapse:collapse;margin:1rem 0}"
            "th,td{border:1px solid #ccc;padding:.25rem .6rem;text-align:left}"
            "td.num{text-align:right;font-variant-numeric:tabular-nums}"
            "th{background:#f3f3f3}img{max-width:100%}figcaption{color:#555;font-size:.9rem}"
            "pre{background:#f6f6f6;padding:.6rem;overflow-x:auto}"
        )
        return (
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{esc(self.title)}</title><style>{style}</style></head>\n<body>\n"
            + "\n".join(body)
            + "\n</body></html>\n"
        )
