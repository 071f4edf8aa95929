"""The text of a context pack and its token budget (seed section 1, "Budget").

Tokens are estimated as ceil(characters / agents.context.chars_per_token) over the exact text each
section renders to in the requested format (compact JSON, or the seed's Markdown). Over budget, the
pack is trimmed in agents.context.trim_order, each step removing one item at a time until the pack
fits; seed Records are never trimmed (over_budget says when they alone do not fit).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import orjson

from lorebase_keeper.reads.explain import extraction_line

SECTIONS = ("seeds", "neighbors", "links", "schema", "recent_changes", "lineage")
TITLES = {
    "seeds": "Records",
    "neighbors": "Neighbors",
    "links": "Links",
    "schema": "Schema",
    "recent_changes": "Recent changes",
    "lineage": "Lineage",
}


def _text(value: Any) -> str:
    return "true" if value is True else "false" if value is False else str(value)


def _cell(value: Any) -> str:
    return _text(value).replace("|", "\\|").replace("\n", " ")


def _values(values: dict[str, Any]) -> str:
    return "; ".join(f"{name}={_text(v)}" for name, v in values.items())


def render_markdown_section(name: str, pack: dict[str, Any]) -> str:
    value = pack[name]
    if not value:
        return ""
    lines = [f"## {TITLES[name]}"]
    if name == "seeds":
        for seed in value:
            lines.append(f"### {seed['ref']}: {seed['title']}" if seed.get("title") else f"### {seed['ref']}")
            lines += [f"- {attr}: {_text(v)}" for attr, v in seed["values"].items()]
            if seed.get("updated_revision"):
                lines.append(f"- (last changed in {seed['updated_revision'][:12]})")
    elif name == "neighbors":
        lines += ["| ref | title | depth | values |", "| --- | --- | --- | --- |"]
        for n in value:
            lines.append(
                f"| {n['ref']} | {_cell(n.get('title') or '')} | {n['depth']} | {_cell(_values(n.get('values') or {}))} |"
            )
    elif name == "links":
        for relation, links in value.items():
            ends = pack["_relation_ends"].get(relation, "")
            lines.append(f"### {relation} ({ends})")
            for link in links:
                extra = f" ({_values(link['values'])})" if link.get("values") else ""
                lines.append(f"- {link['from']} -> {link['to']}{extra}")
    elif name == "schema":
        for kind in value.get("kinds", []):
            lines.append(f"### Kind {kind['name']}")
            if kind.get("description"):
                lines.append(kind["description"])
            title = f"; title: {kind['title']}" if kind.get("title") else ""
            lines.append(f"key: {', '.join(kind['key'])}{title}")
            for attr in kind["attributes"]:
                described = f": {attr['description']}" if attr.get("description") else ""
                lines.append(f"- {attr['name']} ({attr['type']}){described}")
        for relation in value.get("relations", []):
            lines.append(f"### Relation {relation['name']} ({relation['from']} -> {relation['to']})")
            if relation.get("description"):
                lines.append(relation["description"])
            inverse = f"; inverse: {relation['inverse']}" if relation.get("inverse") else ""
            lines.append(f"cardinality: {relation['cardinality']}{inverse}")
    elif name == "recent_changes":
        for c in value:
            attributes = f" {', '.join(c['attributes'])}" if c["attributes"] else ""
            lines.append(
                f"- {c['revision'][:12]} at {c['at']} by {c['actor']} ({c['origin']}): "
                f"{c['ref']} {c['change']}{attributes}; {c['message']}"
            )
    elif name == "lineage":
        for entry in value:
            lines.append(
                f"- {entry['ref']}: {', '.join(entry['attributes'])} from {entry['origin']} by {entry['actor']} at {entry['at']}"
            )
            for attribute, evidence in (entry.get("extractions") or {}).items():
                lines.append(f"  - {attribute} extracted from {extraction_line(evidence)}")
    return "\n".join(lines)


def section_text(name: str, pack: dict[str, Any], format_: str) -> str:
    if format_ == "markdown":
        return render_markdown_section(name, pack)
    return orjson.dumps(pack[name]).decode()


@dataclass
class Budget:
    limit: int
    chars_per_token: float
    format: str
    sections: dict[str, int] = field(default_factory=dict)
    trimmed: list[str] = field(default_factory=list)
    omitted: dict[str, int] = field(default_factory=dict)
    over_budget: bool = False
    capped: bool = False

    def estimate(self, pack: dict[str, Any], names: list[str]) -> None:
        for name in names:
            self.sections[name] = math.ceil(len(section_text(name, pack, self.format)) / self.chars_per_token)

    @property
    def used(self) -> int:
        return sum(self.sections.values())

    def document(self) -> dict[str, Any]:
        return {
            "limit_tokens": self.limit,
            "used_tokens": self.used,
            "chars_per_token": self.chars_per_token,
            "sections": dict(self.sections),
            "trimmed": list(self.trimmed),
            "omitted": dict(self.omitted),
            "over_budget": self.over_budget,
            "capped": self.capped,
        }


def _drop_links_of(pack: dict[str, Any], refs: set[str]) -> None:
    """Remove the Links touching any of these Records (in one pass over the Links)."""
    for relation in list(pack["links"]):
        pack["links"][relation] = [
            link for link in pack["links"][relation] if link["from"] not in refs and link["to"] not in refs
        ]
        if not pack["links"][relation]:
            del pack["links"][relation]


_NEIGHBOR_STEPS = {
    "far_neighbor_values": (False, True),
    "far_neighbors": (False, False),
    "near_neighbor_values": (True, True),
    "near_neighbors": (True, False),
}


def _trim_neighbors(step: str, pack: dict[str, Any], count: int, dropped: set[str]) -> int:
    """Trim `count` neighbours for a neighbour step in one pass from the end, as `count` single
    trims would: `*_values` empties the values of the last neighbours at depth 1 (near) or deeper
    that still show values; the others remove the last neighbours at that depth (added to
    `dropped`: the caller removes their Links). Neighbours are in (depth, ref) order. How many."""
    near, values_only = _NEIGHBOR_STEPS[step]
    neighbors = pack["neighbors"]
    done = 0
    victims: set[int] = set()
    for index in range(len(neighbors) - 1, -1, -1):
        if done == count:
            break
        neighbor = neighbors[index]
        if (neighbor["depth"] == 1) != near:
            continue
        if values_only:
            if neighbor.get("values"):
                neighbor["values"] = {}
                done += 1
        else:
            victims.add(index)
            dropped.add(neighbor["ref"])
            done += 1
    if victims:
        pack["neighbors"] = [n for i, n in enumerate(neighbors) if i not in victims]
    return done


def _eligible(step: str, pack: dict[str, Any]) -> int:
    """How many neighbours a neighbour step can trim (those at its depth; with values, for `*_values`)."""
    near, values_only = _NEIGHBOR_STEPS[step]
    return sum(
        1 for n in pack["neighbors"] if (n["depth"] == 1) == near and (not values_only or n.get("values"))
    )


def _neighbors_trimmed(step: str, pack: dict[str, Any], count: int) -> tuple[dict[str, Any], set[str]]:
    """The pack with `count` neighbours trimmed by a neighbour step (`pack` left as it is), and
    the refs of the neighbours removed."""
    trimmed = {**pack, "neighbors": [dict(n) for n in pack["neighbors"]]}
    dropped: set[str] = set()
    _trim_neighbors(step, trimmed, count, dropped)
    if dropped:
        trimmed["links"] = {relation: list(links) for relation, links in pack["links"].items()}
        _drop_links_of(trimmed, dropped)
    return trimmed, dropped


def _fit_neighbors(step: str, pack: dict[str, Any], budget: Budget, names: list[str]) -> tuple[int, set[str]]:
    """Trim the fewest neighbours a neighbour step must for the pack to fit, as one-at-a-time trims
    would (all it can when even that does not fit): the smallest count that fits, found by halving,
    since each trim only shrinks the text. Its answer depends only on the neighbours it keeps and
    the first it removes (a pack read without the rest answers the same: `unseen` in `fit`). How
    many it trimmed, and the refs it removed beyond the first."""
    sections: list[str] = [name for name in ("neighbors", "links") if name in names]
    rest = budget.used - sum(budget.sections.get(name, 0) for name in sections)

    def used(count: int) -> tuple[int, dict[str, Any], set[str]]:
        trial, dropped = _neighbors_trimmed(step, pack, count)
        probe = Budget(budget.limit, budget.chars_per_token, budget.format)
        probe.estimate(trial, sections)
        return rest + probe.used, trial, dropped

    most = _eligible(step, pack)
    total, trial, dropped = used(most)
    if total > budget.limit:
        count, beyond = most, dropped  # nothing kept decides it: every one goes
    else:
        low, high = 0, most  # used(low) > limit >= used(high)
        while high - low > 1:
            middle = (low + high) // 2
            if used(middle)[0] > budget.limit:
                low = middle
            else:
                high = middle
        count = high
        _, trial, _ = used(count)
        beyond = used(count - 1)[2]  # all it removed but the first (count - 1 >= 0: it was over)
    pack["neighbors"] = trial["neighbors"]
    pack["links"] = trial["links"]
    return count, beyond


def _trim_one(step: str, pack: dict[str, Any]) -> list[str] | None:
    """Remove the smallest unit a history or schema step can; the sections it touched, or None when
    it has nothing left (neighbour steps: _trim_neighbors)."""
    if step == "lineage" and pack.get("lineage"):
        pack["lineage"].pop()
        return ["lineage"]
    if step == "recent_changes" and pack.get("recent_changes"):
        pack["recent_changes"].pop()  # newest first: the oldest is last
        return ["recent_changes"]
    schema = pack.get("schema") or {}
    if step == "schema_descriptions":
        for entry in reversed(schema.get("relations", []) + schema.get("kinds", [])):
            if entry.get("description") or any(a.get("description") for a in entry.get("attributes", [])):
                entry["description"] = ""
                for attr in entry.get("attributes", []):
                    attr.pop("description", None)
                return ["schema"]
    if step == "schema":
        if schema.get("relations"):
            schema["relations"].pop()
            return ["schema"]
        if schema.get("kinds"):
            schema["kinds"].pop()
            return ["schema"]
    return None


def trimmed_whole(
    pack: dict[str, Any], budget: Budget, names: list[str], trim_order: list[str], step: str
) -> bool:
    """Whether `fit` would trim the whole section of `step` (one of the history steps, `lineage` or
    `recent_changes`, or `far_neighbor_values`), whatever it holds: the step comes before every
    step but the history ones, and the pack is over budget even with the sections of those and of
    this step empty. The caller can then skip reading what the step trims (fit's `omitted`): the
    section of a history step, the values of the far neighbours."""
    if step not in trim_order or any(s not in _HISTORY_STEPS for s in trim_order[: trim_order.index(step)]):
        return False
    emptied = {step, *trim_order[: trim_order.index(step)]}
    probe = Budget(budget.limit, budget.chars_per_token, budget.format)
    emptied_pack = {**pack, **{name: [] for name in emptied if name in _HISTORY_STEPS}}
    if step == "far_neighbor_values":
        emptied_pack["neighbors"] = [
            n if n["depth"] == 1 or not n.get("values") else {**n, "values": {}} for n in pack["neighbors"]
        ]
    probe.estimate(emptied_pack, names)
    return probe.used > probe.limit


_HISTORY_STEPS = ("lineage", "recent_changes")


def fit(
    pack: dict[str, Any],
    budget: Budget,
    names: list[str],
    trim_order: list[str],
    *,
    omitted: dict[str, int] | None = None,
) -> set[str]:
    """Estimate every section, then trim in `trim_order` until the pack fits the budget.

    `omitted` names steps whose section the caller left empty because `trimmed_whole` said it would
    all go, with the number of items it would have held: they count as trimmed, in their place.

    A neighbour step trims the fewest neighbours that make the pack fit (`_fit_neighbors`). What it
    returns, `unseen`: the far neighbours the `far_neighbors` step removed beyond the first it
    removed, when the steps before it trimmed all they could. The answer does not depend on what
    those neighbours or their Links hold, only on their being there (a pack can leave their Links'
    values unread: context/pack.py)."""
    unseen: set[str] = set()
    budget.estimate(pack, names)
    for step in trim_order:
        if omitted and step in omitted:
            if omitted[step] and budget.used > budget.limit:
                budget.omitted[step] = omitted[step]
                budget.trimmed.append(step)
            continue
        if step in _NEIGHBOR_STEPS:
            if budget.used > budget.limit:
                removed, beyond = _fit_neighbors(step, pack, budget, names)
                if step == "far_neighbors":
                    unseen = beyond
                if removed:
                    budget.omitted[step] = removed
                    budget.trimmed.append(step)
                    budget.estimate(pack, [name for name in ("neighbors", "links") if name in names])
            continue
        while budget.used > budget.limit:
            # Far over budget, remove a batch sized from the overage (at most half of what the
            # average item would free), so a large pack is not re-rendered once per item; near the
            # budget, one item at a time, so no more than needed goes.
            batch = max(1, int((budget.used - budget.limit) / max(1.0, _item_tokens(step, pack, budget)) / 2))
            removed = 0
            touched: set[str] = set()
            for _ in range(batch):
                sections = _trim_one(step, pack)
                if sections is None:
                    break
                removed += 1
                touched.update(sections)
            if not removed:
                break
            budget.omitted[step] = budget.omitted.get(step, 0) + removed
            if step not in budget.trimmed:
                budget.trimmed.append(step)
            budget.estimate(pack, [t for t in touched if t in names])
    budget.over_budget = budget.used > budget.limit
    return unseen


_STEP_SECTION = {
    "lineage": "lineage",
    "recent_changes": "recent_changes",
    "far_neighbor_values": "neighbors",
    "far_neighbors": "neighbors",
    "near_neighbor_values": "neighbors",
    "near_neighbors": "neighbors",
}


def _item_tokens(step: str, pack: dict[str, Any], budget: Budget) -> float:
    """The tokens an item of the section a step trims takes on average (schema steps: no batching)."""
    section = _STEP_SECTION.get(step)
    if section is None or not pack.get(section):
        return float("inf")
    return budget.sections.get(section, 0) / len(pack[section])


def pack_markdown(pack: dict[str, Any], names: list[str], budget: Budget) -> str:
    trimmed = ", ".join(f"{step}({budget.omitted[step]})" for step in budget.trimmed)
    header = [
        f"# Context: {pack['domain']}/{pack['branch']}",
        f"revision {pack['revision']}; estimated {budget.used} of {budget.limit} tokens"
        + (f"; trimmed: {trimmed}" if trimmed else ""),
    ]
    parts = ["\n".join(header)] + [text for name in names if (text := render_markdown_section(name, pack))]
    return "\n\n".join(parts) + "\n"


__all__ = ["SECTIONS", "Budget", "fit", "pack_markdown", "section_text", "trimmed_whole"]
