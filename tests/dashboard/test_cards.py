"""How cards are drawn on buttons: readable on the button they sit on."""

from __future__ import annotations

from dashboard.quiz import card_label


def test_a_placed_card_is_not_red_on_the_red_button() -> None:
    # unplaced: a secondary (white) button, the card in its suit colour
    assert card_label("Ah") == ":red[A♥]"
    assert card_label("Td") == ":blue[T♦]"
    # placed: the primary (red) button; a red heart on it could not be read
    placed = card_label("Ah", "top")
    assert ":red[" not in placed and placed == "A♥ → top"
    assert card_label("Td", "discard") == "T♦ → discard"
