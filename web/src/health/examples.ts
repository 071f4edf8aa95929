/**
 * The health report's example keys as Record references. Violations, duplicates and required gaps
 * list keys of one Kind (`S-1003`); orphan Links list `fromKey->toKey` of the Relation's two Kinds.
 */
export interface ExampleRef {
  kind: string;
  key: string;
}

export function keyRef(kind: string, key: string): ExampleRef {
  return { kind, key };
}

/** An orphan Link's two ends (`P-10003->PL-01`); a text without the arrow names the from side. */
export function orphanRefs(example: string, from: string, to: string): ExampleRef[] {
  const arrow = example.indexOf("->");
  if (arrow < 0) return [{ kind: from, key: example }];
  return [
    { kind: from, key: example.slice(0, arrow) },
    { kind: to, key: example.slice(arrow + 2) },
  ];
}
