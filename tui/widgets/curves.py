"""A plotted Beta curve and its colour (a theme variable per role), shared by BetaPlot and DensityPlot."""

from __future__ import annotations

from dataclasses import dataclass

# theme variable per curve role: the draft is never the colour of the grade in force
ROLE_VARIABLE = {
    "main": "primary",
    "after": "primary",
    "draft": "warning",
    "before": "secondary",
    "prior": "foreground-muted",
}
PIN_VARIABLES = ("accent", "success", "error")


@dataclass(frozen=True)
class Curve:
    label: str
    alpha: float
    beta: float
    role: str = "main"  # main | pin | prior | before | after | draft
    slot: int = 0  # a pin's place in the pin list: its colour stays while the cursor moves


def curve_variable(curve: Curve) -> str:
    if curve.role == "pin":
        return PIN_VARIABLES[curve.slot % len(PIN_VARIABLES)]
    return ROLE_VARIABLE.get(curve.role, "primary")
