/**
 * The retrieval lab's comparison in the URL query, so a link restores it.
 *
 * Readable keys, one per member, prefixed by the configuration's index:
 * `?q=red+seals&n=2&c0.lens=supplier_risk&c0.depth=1&c1.trait=Located&c1.trait=Priced&c1.budget=800`.
 * Lists repeat their key (so any text round-trips, commas included); a query vector is one key of
 * comma-separated numbers; booleans are 1/0. Only members that differ from the default are written,
 * `n` says how many configurations there are (an all-default one writes nothing else). Keys the lab
 * does not own (`branch`, `at`, ...) are left as they are.
 *
 * Decoding is lenient: a link edited by hand never breaks the page. A value that does not parse is
 * dropped and named in `warnings`, which the page shows.
 */

import { emptyConfig, MAX_CONFIGS, MIN_CONFIGS, type LabConfig, type LabState } from "./config";

const PREFIX = /^c(\d)\.(.+)$/;

function isLabKey(key: string): boolean {
  return key === "q" || key === "n" || PREFIX.test(key);
}

function writeConfig(params: URLSearchParams, i: number, config: LabConfig): void {
  const key = (name: string) => `c${i}.${name}`;
  if (config.label) params.set(key("label"), config.label);
  if (config.lens) params.set(key("lens"), config.lens);
  for (const trait of config.traits) params.append(key("trait"), trait);
  for (const kind of config.kinds) params.append(key("kind"), kind);
  for (const relation of config.relations) params.append(key("rel"), relation);
  if (config.depth !== null) params.set(key("depth"), String(config.depth));
  if (config.budgetTokens !== null) params.set(key("budget"), String(config.budgetTokens));
  if (config.limit !== null) params.set(key("limit"), String(config.limit));
  if (config.includeSchema !== null) params.set(key("schema"), config.includeSchema ? "1" : "0");
  if (config.includeRecentChanges !== null) params.set(key("changes"), config.includeRecentChanges ? "1" : "0");
  if (config.includeLineage !== null) params.set(key("lineage"), config.includeLineage ? "1" : "0");
  if (config.queryVector?.length) params.set(key("vec"), config.queryVector.join(","));
}

/** `params` with the lab's keys replaced by `state` (a new object; other keys kept in order). */
export function encodeLabState(state: LabState, params: URLSearchParams = new URLSearchParams()): URLSearchParams {
  const out = new URLSearchParams();
  params.forEach((value, key) => {
    if (!isLabKey(key)) out.append(key, value);
  });
  if (state.question) out.set("q", state.question);
  out.set("n", String(state.configs.length));
  state.configs.forEach((config, i) => writeConfig(out, i, config));
  return out;
}

export interface Decoded {
  state: LabState;
  warnings: string[];
}

function integer(text: string, name: string, min: number, max: number, warnings: string[]): number | null {
  if (!/^\d+$/.test(text)) {
    warnings.push(`${name} "${text}" is not a whole number: ignored`);
    return null;
  }
  const value = Number(text);
  if (value < min || value > max) {
    warnings.push(`${name} ${value} is outside ${min}-${max}: ignored`);
    return null;
  }
  return value;
}

function flag(text: string, name: string, warnings: string[]): boolean | null {
  if (text === "1" || text === "true") return true;
  if (text === "0" || text === "false") return false;
  warnings.push(`${name} "${text}" is not 1 or 0: ignored`);
  return null;
}

function vector(text: string, name: string, warnings: string[]): number[] | null {
  const numbers = text.split(",").map((part) => Number(part.trim()));
  if (numbers.length === 0 || numbers.some((n) => !Number.isFinite(n)) || text.trim() === "") {
    warnings.push(`${name} is not a list of numbers: ignored`);
    return null;
  }
  return numbers;
}

export function decodeLabState(params: URLSearchParams): Decoded {
  const warnings: string[] = [];
  const configs: LabConfig[] = [];
  const config = (i: number): LabConfig => {
    while (configs.length <= i) configs.push(emptyConfig());
    return configs[i]!;
  };
  let wanted = MIN_CONFIGS;
  const n = params.get("n");
  if (n !== null) wanted = integer(n, "n", MIN_CONFIGS, MAX_CONFIGS, warnings) ?? MIN_CONFIGS;

  params.forEach((value, key) => {
    const match = PREFIX.exec(key);
    if (!match) return;
    const i = Number(match[1]);
    if (i >= MAX_CONFIGS) {
      warnings.push(`${key}: at most ${MAX_CONFIGS} configurations: ignored`);
      return;
    }
    const c = config(i);
    const name = `configuration ${String.fromCharCode(65 + i)} ${match[2]}`;
    switch (match[2]) {
      case "label":
        c.label = value;
        break;
      case "lens":
        c.lens = value;
        break;
      case "trait":
        if (value) c.traits.push(value);
        break;
      case "kind":
        if (value) c.kinds.push(value);
        break;
      case "rel":
        if (value) c.relations.push(value);
        break;
      case "depth":
        c.depth = integer(value, name, 0, 100, warnings);
        break;
      case "budget":
        c.budgetTokens = integer(value, name, 0, 10_000_000, warnings);
        break;
      case "limit":
        c.limit = integer(value, name, 1, 100_000, warnings);
        break;
      case "schema":
        c.includeSchema = flag(value, name, warnings);
        break;
      case "changes":
        c.includeRecentChanges = flag(value, name, warnings);
        break;
      case "lineage":
        c.includeLineage = flag(value, name, warnings);
        break;
      case "vec":
        c.queryVector = vector(value, name, warnings);
        break;
      default:
        warnings.push(`${key} is not a lab setting: ignored`);
    }
  });
  config(Math.max(wanted, configs.length) - 1);
  return { state: { question: params.get("q") ?? "", configs }, warnings };
}
