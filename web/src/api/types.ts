/**
 * The API's answers the app reads, typed by hand from /openapi.json and docs/rest-reference.md.
 * Only the members the screens use are required here; the rest of an answer is ignored.
 */

/** `POST|GET /api/v1/web/session`. */
export interface WebSession {
  principal: string;
  principal_type: string;
  admin: boolean;
  expires_at: string;
  csrf_token: string;
}

/** A branch of a Domain (`GET .../branches`). */
export interface Branch {
  name: string;
  head: string;
  generation: number;
  default: boolean;
  protected: boolean;
  required_approvals: number;
  from: string;
  mode: "copy" | "overlay";
  created_by: string;
  created_at: string;
}

export interface BranchList {
  domain: string;
  branches: Branch[];
}
