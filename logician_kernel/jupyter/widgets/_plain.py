"""A readable `text/plain` for a widget's display bundle.

ipywidgets puts `repr(widget)` there (`StatusWidget(children=(HBox(...`), which is what
`jupyter console`, nbconvert's text exports and logs show. A view mixes this in and says in
one `plain_text()` what it shows; the widget view itself is left as ipywidgets builds it.
"""

from __future__ import annotations

from typing import Any


class PlainText:
    """Mixin for an `ipywidgets` widget: its display bundle's `text/plain` is `plain_text()`."""

    def plain_text(self) -> str:
        """What the widget shows, as text a person reads in a terminal."""
        raise NotImplementedError

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any] | None:
        bundle = super()._repr_mimebundle_(**kwargs)  # type: ignore[misc]
        if bundle is not None:
            bundle["text/plain"] = self.plain_text()
        return bundle
