"""The colours of the kernel's own HTML (approval cards, diffs, the rewind control, the run
status): JupyterLab's theme variables (`--jp-*`), so they follow the light, dark and
high-contrast themes, each with the light theme's value as the fallback for a frontend that
defines none (VS Code, the classic notebook).

Must never: hold a bare colour without a `--jp-*` variable in front of it.
"""

from __future__ import annotations

OK = "var(--jp-success-color0, #1a7f37)"
"""Done, allowed, restored."""
ERROR = "var(--jp-error-color0, #cf222e)"
"""Failed, denied, a conflict."""
WARN = "var(--jp-warn-color0, #9a6700)"
"""Stopped by a limit."""
ACCENT = "var(--jp-brand-color0, #0969da)"
"""A diff's hunk header; a decision the user made (denied)."""
MUTED = "var(--jp-ui-font-color2, #57606a)"
"""Cancelled; secondary text."""
TEXT = "var(--jp-content-font-color1, inherit)"
"""The theme's text colour (diff lines keep it: their tint says added or removed)."""
ADDED_BACKGROUND = "color-mix(in srgb, var(--jp-success-color1, #1a7f37) 18%, transparent)"
"""A diff's added line: a tint of the theme's green over whatever background it has."""
REMOVED_BACKGROUND = "color-mix(in srgb, var(--jp-error-color1, #cf222e) 18%, transparent)"
"""A diff's removed line: a tint of the theme's red."""
BORDER = "var(--jp-border-color1, #ccc)"
