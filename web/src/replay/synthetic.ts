/**
 * A synthetic agent session of any size, for the unit tests and benchmarks of the replay (the browser
 * test builds the same shape in Python: tests/browser/test_replay.py). Deterministic: the same
 * arguments give the same session.
 */

import type { Session, SessionEntry, SessionStep } from "./types";

const KINDS = ["Supplier", "Part", "Contract", "Plant", "RiskFlag", "Shipment"];

export function syntheticSession(steps: number, records: number, session = "synthetic"): Session {
  let seed = 42;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  const ref = (i: number) => `${KINDS[i % KINDS.length]}/R-${i}`;
  const entries: SessionEntry[] = [];
  for (let s = 0; s < steps; s++) {
    // Walk the Records in order so every one is touched, plus a few earlier ones again.
    const base = Math.floor((s * records) / steps);
    const next = Math.floor(((s + 1) * records) / steps);
    const touched: string[] = [];
    for (let i = base; i < Math.max(next, base + 1) && i < records; i++) touched.push(ref(i));
    for (let k = 0; k < 2 && base > 0; k++) touched.push(ref(Math.floor(random() * base)));
    const links = touched.slice(1).map((to, k) => ({ relation: "related", from: touched[k]!, to }));
    const step: SessionStep = {
      kind: "step",
      id: entries.length + 1,
      at: new Date(Date.UTC(2026, 9, 1, 8, 0, 0, s * 250)).toISOString(),
      principal: "agt_synthetic",
      domain: "supply",
      call: s % 3 === 0 ? "Context" : s % 3 === 1 ? "Query" : "GetRecord",
      status: s % 50 === 49 ? 404 : 200,
      latency_ms: 2 + (s % 17),
      counts: { touched: touched.length },
      request: { domain: "supply" },
      touched,
      touched_links: links,
      revision: (s % 16).toString(16).repeat(64),
    };
    entries.push(step);
    if (s % 100 === 0) {
      entries.push({ kind: "note", id: entries.length + 1, at: step.at, principal: "agt_synthetic", text: `note ${s}` });
    }
  }
  return { session, entries, steps };
}
