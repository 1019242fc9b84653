"""Terminal layout of the narrated output (demos, walkthroughs, simulator traces).

Lines are laid out for a 100-column terminal: a long line is broken at spaces and continued on
indented lines, never cut, so the facts at the end of a line (an ISR, a LeaderAndIsr) stay
visible. ``--wide`` (alias ``--full``) prints each line whole instead, for logs and grep.
"""

from __future__ import annotations

import textwrap

#: Columns the output is laid out for.
WIDTH = 100


def wrap(text: str, width: int | None = WIDTH, indent: int | None = None) -> list[str]:
    """``text`` as one or more lines of at most ``width`` columns (``None``: one line, whole).

    Continuation lines are indented by ``indent`` spaces (default: the line's own indentation
    plus four). A single word longer than the width is kept whole rather than cut.
    """
    if width is None or len(text) <= width:
        return [text]
    lead = len(text) - len(text.lstrip(" "))
    wrapper = textwrap.TextWrapper(width=width, subsequent_indent=" " * (lead + 4 if indent is None else indent),
                                   break_long_words=False, break_on_hyphens=False, replace_whitespace=False)
    return wrapper.wrap(text) or [text]


def add_width_arguments(parser) -> None:  # noqa: ANN001 - an argparse parser
    parser.add_argument("--wide", "--full", dest="wide", action="store_true",
                        help=f"print every line whole instead of wrapping it at {WIDTH} columns")
