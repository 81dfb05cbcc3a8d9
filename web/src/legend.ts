// The pieces of page both pages build: elements with their text, and the timeline's legend.

import { LEGEND } from "./timeline";

export function element(tag: string, text = "", className = ""): HTMLElement {
  const e = document.createElement(tag);
  e.textContent = text;
  if (className) e.className = className;
  return e;
}

export function legend(what: "run" | "live"): HTMLElement {
  const list = element("ul", "", "legend");
  const swatch = (label: string, color: string) => {
    const item = element("li", label);
    const mark = element("span", "", "swatch");
    mark.style.background = color;
    item.prepend(mark);
    list.append(item);
  };
  for (const [status, color] of Object.entries(LEGEND.health)) swatch(`health ${status}`, color);
  // Karmada's and OCM's effects of the same strength share a colour and a swatch.
  const effects = new Map<string, string[]>();
  for (const [effect, color] of Object.entries(LEGEND.taints)) {
    effects.set(color, [...(effects.get(color) ?? []), effect]);
  }
  for (const [color, names] of effects) swatch(`taint ${names.join(" / ")}`, color);
  swatch("eviction task: ▼ created, ● retired", LEGEND.eviction);
  if (what === "run") {
    swatch("expectation passed", LEGEND.expectations.passed);
    swatch("expectation failed", LEGEND.expectations.failed);
  } else {
    for (const [type, color] of Object.entries(LEGEND.events)) swatch(`event ${type}`, color);
  }
  return list;
}

