/**
 * The lab's calls, through the app's one REST client: a configuration's resolve, search and context
 * pack for the question, each kept as its answer or its problem (one failing call, say a lens the
 * caller may not read, must not hide what the other two found), and the schema's names for the
 * editors' choices.
 */

import { get, post, seg } from "../api/client";
import { ApiProblem } from "../api/problem";
import { contextBody, resolveBody, searchBody, type LabConfig } from "./config";
import type { ContextPack, LabRun, Outcome, ResolveResult, SearchResults } from "./types";

async function outcome<T>(call: Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await call };
  } catch (error) {
    if (error instanceof ApiProblem) {
      return { ok: false, problem: { status: error.status, title: error.title, detail: error.detail } };
    }
    return { ok: false, problem: { status: 0, title: "The call failed", detail: String(error) } };
  }
}

/** A configuration's search alone (what a question set is scored on). */
export function searchFor(domain: string, question: string, config: LabConfig, branch?: string): Promise<Outcome<SearchResults>> {
  return outcome(post<SearchResults>(`/api/v1/domains/${seg(domain)}/search`, searchBody(question, config, branch)));
}

/** Resolve, search and the context pack of one configuration. With a limit, the pack is seeded with
 * the search's first `limit` Records, so it waits for the search. */
export async function runConfig(domain: string, question: string, config: LabConfig, branch?: string): Promise<LabRun> {
  const base = `/api/v1/domains/${seg(domain)}`;
  const resolving = outcome(post<ResolveResult>(`${base}/resolve`, resolveBody(question, config, branch)));
  const searching = searchFor(domain, question, config, branch);
  let packing: Promise<Outcome<ContextPack>>;
  if (config.limit === null) {
    packing = outcome(post<ContextPack>(`${base}/context`, contextBody(question, config, branch)));
  } else {
    const limit = config.limit;
    packing = searching.then((search): Promise<Outcome<ContextPack>> => {
      if (!search.ok) return Promise.resolve({ ok: false, problem: { ...search.problem, title: `No seeds: ${search.problem.title}` } });
      const seeds = search.value.results.slice(0, limit).map((hit) => hit.ref);
      if (seeds.length === 0) {
        return Promise.resolve({ ok: false, problem: { status: 0, title: "No seeds", detail: "The search found no Record to seed the pack with." } });
      }
      return outcome(post<ContextPack>(`${base}/context`, contextBody(question, config, branch, seeds)));
    });
  }
  const [resolve, search, context] = await Promise.all([resolving, searching, packing]);
  return { resolve, search, context };
}

/** The names the editors offer (what this caller may read). */
export interface SchemaNames {
  kinds: string[];
  traits: string[];
  relations: string[];
  lenses: string[];
}

interface Named {
  name: string;
}

export async function schemaNames(domain: string, branch?: string): Promise<SchemaNames> {
  const schema = await get<{ kinds?: Named[]; traits?: Named[]; relations?: Named[]; lenses?: Named[] }>(
    `/api/v1/domains/${seg(domain)}/schema`,
    { branch },
  );
  const names = (list?: Named[]) => (list ?? []).map((item) => item.name);
  return {
    kinds: names(schema.kinds),
    traits: names(schema.traits),
    relations: names(schema.relations),
    lenses: names(schema.lenses),
  };
}
