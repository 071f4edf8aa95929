/**
 * Saved question sets: questions with the Records a good answer holds, to tune configurations
 * against. A configuration scores hit@k on a set: the share of its questions for which its search
 * puts an expected Record among its first k results (the rank of the first one is shown too).
 *
 * Sets are kept in this browser's localStorage, per Domain (`lorebase.lab.sets.<domain>`): they are
 * the user's working notes, not the Domain's data, and never leave the browser. They are edited as
 * text, one question a line: `question | Kind/key, Kind/key`.
 */

export interface Question {
  text: string;
  /** Record references `Kind/key` a good answer holds. */
  expected: string[];
}

export interface QuestionSet {
  name: string;
  k: number;
  questions: Question[];
}

/** The sets' text: one question a line, its expected Records after `|`. */
export function formatQuestions(questions: Question[]): string {
  return questions.map((q) => `${q.text} | ${q.expected.join(", ")}`).join("\n");
}

/** The questions of the text, and what is wrong with its lines (by line number, 1-based). */
export function parseQuestions(text: string): { questions: Question[]; errors: string[] } {
  const questions: Question[] = [];
  const errors: string[] = [];
  text.split("\n").forEach((line, i) => {
    if (!line.trim()) return;
    const bar = line.lastIndexOf("|");
    const question = (bar < 0 ? line : line.slice(0, bar)).trim();
    const expected = bar < 0 ? [] : line.slice(bar + 1).split(",").map((r) => r.trim()).filter(Boolean);
    if (!question) errors.push(`line ${i + 1}: no question before "|"`);
    else if (expected.length === 0) errors.push(`line ${i + 1}: name the expected Records after "|", like Supplier/S-1001`);
    else if (expected.some((ref) => ref.indexOf("/") <= 0)) errors.push(`line ${i + 1}: an expected Record is Kind/key`);
    else questions.push({ text: question, expected });
  });
  return { questions, errors };
}

/** The rank (1-based) of the first expected Record among the first k results; null: a miss. */
export function hitRank(results: readonly string[], expected: readonly string[], k: number): number | null {
  const wanted = new Set(expected);
  const index = results.slice(0, k).findIndex((ref) => wanted.has(ref));
  return index < 0 ? null : index + 1;
}

/** hit@k over the questions scored: hits / scored (null: nothing scored). */
export function hitAtK(ranks: ReadonlyArray<number | null | undefined>): { hits: number; scored: number; rate: number | null } {
  const scored = ranks.filter((r) => r !== undefined);
  const hits = scored.filter((r) => r !== null).length;
  return { hits, scored: scored.length, rate: scored.length ? hits / scored.length : null };
}

/** Where the sets live: localStorage, or anything shaped like it (tests). */
export interface SetStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

const storeKey = (domain: string) => `lorebase.lab.sets.${domain}`;

function isSet(value: unknown): value is QuestionSet {
  const set = value as QuestionSet;
  return (
    typeof set === "object" &&
    set !== null &&
    typeof set.name === "string" &&
    typeof set.k === "number" &&
    Array.isArray(set.questions) &&
    set.questions.every((q) => typeof q?.text === "string" && Array.isArray(q.expected))
  );
}

export function loadSets(domain: string, store: SetStore): QuestionSet[] {
  try {
    const parsed: unknown = JSON.parse(store.getItem(storeKey(domain)) ?? "[]");
    return Array.isArray(parsed) ? parsed.filter(isSet) : [];
  } catch {
    return [];
  }
}

/** The sets with `set` saved (replacing one of the same name), sorted by name. */
export function saveSet(domain: string, store: SetStore, set: QuestionSet): QuestionSet[] {
  const sets = [...loadSets(domain, store).filter((s) => s.name !== set.name), set].sort((a, b) => a.name.localeCompare(b.name));
  store.setItem(storeKey(domain), JSON.stringify(sets));
  return sets;
}

export function deleteSet(domain: string, store: SetStore, name: string): QuestionSet[] {
  const sets = loadSets(domain, store).filter((s) => s.name !== name);
  store.setItem(storeKey(domain), JSON.stringify(sets));
  return sets;
}
