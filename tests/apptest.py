"""Reading a page run under AppTest beyond its built-in elements: custom components."""

from __future__ import annotations

import json
from typing import Any

from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import UnknownElement


def component_element(app: AppTest, key: str) -> UnknownElement:
    """The custom component ``key`` (the card pad, the hand replay) in the last run's page."""
    def find(node: Any) -> UnknownElement | None:
        for child in getattr(node, "children", {}).values():
            if isinstance(child, UnknownElement) and child.key == key:
                return child
            found = find(child)
            if found is not None:
                return found
        return None

    element = find(app._tree)
    assert element is not None, f"no component {key} on the page"
    return element


def component_data(app: AppTest, key: str) -> dict[str, Any]:
    """What the page sent to the custom component ``key``."""
    return json.loads(component_element(app, key).proto.json)
