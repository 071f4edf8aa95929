/**
 * Sign-in: an API key exchanged for a session cookie (`POST /api/v1/web/session`), the session
 * asked again after a reload (`GET`), and sign-out (`DELETE`). The key itself is sent once and kept
 * nowhere; the answer's CSRF token is kept in memory for the writes that follow.
 */
import { request } from "./client";
import { setCsrfToken } from "./csrf";
import type { WebSession } from "./types";

const PATH = "/api/v1/web/session";

export async function signIn(key: string): Promise<WebSession> {
  const session = await request<WebSession>("POST", PATH, { body: { key }, quiet401: true });
  setCsrfToken(session.csrf_token);
  return session;
}

/** The current session, or null when there is none (no cookie, expired, revoked). */
export async function currentSession(): Promise<WebSession | null> {
  try {
    const session = await request<WebSession>("GET", PATH, { quiet401: true });
    setCsrfToken(session.csrf_token);
    return session;
  } catch (error) {
    if (error instanceof Error && "status" in error && (error as { status: number }).status === 401) {
      setCsrfToken(null);
      return null;
    }
    throw error;
  }
}

export async function signOut(): Promise<void> {
  try {
    await request<void>("DELETE", PATH, { quiet401: true });
  } finally {
    setCsrfToken(null);
  }
}
