/** The neighbourhood canvas's one read: `POST /neighborhood` around one Record, at the read point. */
import { post } from "../api/client";
import { domainBase } from "../api/domain";
import type { ReadPointQuery } from "../api/records";
import type { Neighborhood } from "./graph";

export const readNeighborhood = (domain: string, ref: string, depth: number, point: ReadPointQuery) =>
  post<Neighborhood>(`${domainBase(domain)}/neighborhood`, {
    refs: [ref],
    depth,
    values: false,
    ...(point.branch ? { branch: point.branch } : {}),
    ...(point.at ? { at: point.at } : {}),
  });
