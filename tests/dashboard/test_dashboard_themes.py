"""Each theme is readable: WCAG AA contrast (4.5:1) for every text colour on the backgrounds it
is drawn on, computed from the custom properties in the theme's CSS file."""

from __future__ import annotations

import re

import pytest

from benchwarmers.dashboard import STATIC, THEMES

AA_BODY_TEXT = 4.5
# (text, background) as the stylesheet pairs them (static/app.css).
PAIRS = [
    ("text", "bg"),
    ("text", "surface"),
    ("text", "surface-2"),
    ("text", "input-bg"),
    ("muted", "bg"),
    ("muted", "surface"),
    ("muted", "surface-2"),
    ("link", "bg"),
    ("link", "surface"),
    ("link", "surface-2"),
    ("on-accent", "accent"),
    ("danger", "bg"),
    ("danger", "surface"),
    ("good-text", "good-bg"),
    ("bad-text", "bad-bg"),
    ("warn-text", "warn-bg"),
    ("skip-text", "skip-bg"),
    ("good-strong", "surface"),
    ("warn-strong", "surface"),
]
AA_NON_TEXT = 3.0
# (colour, background) for what must be seen but is not text (WCAG 1.4.11): input borders, the charts' lines,
# and the chips that tell an owed seat (dashed accent border) from a failed one (danger border) on the card's
# surfaces.
NON_TEXT = [
    ("input-border", "input-bg"),
    ("input-border", "surface"),
    ("input-border", "surface-2"),
    ("input-border", "bg"),
    ("accent", "surface"),
    ("accent", "surface-2"),
    ("accent", "bg"),
    ("danger", "surface-2"),
    ("danger", "bg"),
    # The lines of the charts over time, on the card they are drawn in.
    *((f"series-{n}", "surface") for n in range(1, 7)),
]
VARIABLE = re.compile(r"--([a-z0-9-]+)\s*:\s*([^;]+);")
USED = re.compile(r"var\(--([a-z0-9-]+)\)")


def variables(theme: str) -> dict[str, str]:
    return dict(VARIABLE.findall((STATIC / "themes" / f"{theme}.css").read_text()))


def luminance(colour: str) -> float:
    digits = colour.strip().lstrip("#")
    assert re.fullmatch(r"[0-9a-fA-F]{6}", digits), f"{colour!r} is not #rrggbb"

    def linear(channel: float) -> float:
        return channel / 12.92 if channel <= 0.03928 else ((channel + 0.055) / 1.055) ** 2.4

    red, green, blue = (linear(int(digits[i : i + 2], 16) / 255) for i in (0, 2, 4))
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def contrast(foreground: str, background: str) -> float:
    light, dark = sorted((luminance(foreground), luminance(background)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def test_the_contrast_formula_matches_wcags_reference_values():
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)
    assert contrast("#595959", "#ffffff") == pytest.approx(7.0, abs=0.01)


@pytest.mark.parametrize("theme", THEMES)
def test_body_text_meets_wcag_aa_in_every_theme(theme):
    found = variables(theme)
    failing = {
        f"{text} on {background}": round(contrast(found[text], found[background]), 2)
        for text, background in PAIRS
        if contrast(found[text], found[background]) < AA_BODY_TEXT
    }
    assert failing == {}


@pytest.mark.parametrize("theme", THEMES)
def test_borders_and_chip_marks_meet_wcag_non_text_contrast_in_every_theme(theme):
    found = variables(theme)
    failing = {
        f"{colour} on {background}": round(contrast(found[colour], found[background]), 2)
        for colour, background in NON_TEXT
        if contrast(found[colour], found[background]) < AA_NON_TEXT
    }
    assert failing == {}


@pytest.mark.parametrize("theme", THEMES)
def test_every_property_the_stylesheet_uses_is_defined_by_every_theme(theme):
    used = set(USED.findall((STATIC / "app.css").read_text()))
    assert used - set(variables(theme)) == set()
    assert set(variables(theme)) == set(variables(THEMES[0]))
