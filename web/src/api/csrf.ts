/**
 * The CSRF token of the signed-in session, held in memory only.
 *
 * The session cookie is HttpOnly, so JavaScript never sees the credential; the gateway asks every
 * cookie-authenticated write (POST, PUT, PATCH, DELETE) for `X-CSRF-Token`, whose value only the
 * sign-in answer and `GET /api/v1/web/session` reveal. Nothing is written to localStorage or
 * sessionStorage: a reload asks the session again.
 */

let token: string | null = null;

export function setCsrfToken(value: string | null): void {
  token = value;
}

export function csrfToken(): string | null {
  return token;
}

const UNSAFE = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** The headers a request of this method needs beyond the body's: the CSRF token on writes. */
export function csrfHeaders(method: string): Record<string, string> {
  if (!UNSAFE.has(method.toUpperCase()) || token === null) return {};
  return { "X-CSRF-Token": token };
}
