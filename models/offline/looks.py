"""Where the chain stands with zoomed looks: which steps can look again around a core, and whether a marginal
item is settled (its steps had their look, none can have one, or no round is left)."""
from __future__ import annotations

from .model_items import roles_of


def steps_for(chain, items: list, ws) -> list[int]:
    """Colour-marking steps on a layer of the items' roles: the steps that can take a zoomed look at them."""
    wanted = roles_of(ws, items)
    return [n.step.index for n in chain if n.step.tool == "color_regions" and n.step.layers
            and ws.layer(n.step.layers[0]).role in wanted]


def refined(chain, items: list, ws) -> bool:
    """Whether the steps testing these items were already re-executed with a zoomed look."""
    wanted = roles_of(ws, items)
    for node in chain:
        if node.step.layers and ws.layer(node.step.layers[0]).role in wanted and node.observation.calls:
            if "bounds" in node.observation.calls[-1].get("params", {}):
                return True
    return False


def settled(ws, items: list) -> bool:
    """Whether marginal items can have no further look: their steps had their zoomed look, none can have
    one, or no round is left."""
    return ws.last_round or not steps_for(ws.chain, items, ws) or refined(ws.chain, items, ws)


def looked_again(ws, item: dict) -> bool:
    """Whether a marginal item is settled: a secondary one at once (the verifier asks a zoomed look for
    critical items only), a critical one as `settled`."""
    return item["level"] != "critical" or settled(ws, [item["id"]])
