/**
 * Who is signed in, for the whole app. On load the session is asked of the API (the cookie is
 * HttpOnly, so that is the only way to know); any 401 afterwards clears it, and RequireSession
 * sends the visitor to sign-in with the page to come back to.
 */
import { Center, Loader } from "@mantine/core";
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from "react";
import { Navigate, useLocation } from "react-router";
import { onUnauthenticated } from "../api/client";
import { currentSession, signIn as apiSignIn, signOut as apiSignOut } from "../api/session";
import type { WebSession } from "../api/types";

interface Auth {
  /** undefined while the first probe runs, null when signed out. */
  session: WebSession | null | undefined;
  signIn: (key: string) => Promise<WebSession>;
  signOut: () => Promise<void>;
}

const AuthContext = createContext<Auth | null>(null);

export function AuthProvider({ children }: { children: ReactNode }) {
  const [session, setSession] = useState<WebSession | null | undefined>(undefined);

  useEffect(() => {
    let live = true;
    currentSession()
      .then((s) => live && setSession(s))
      .catch(() => live && setSession(null));
    const stop = onUnauthenticated(() => setSession(null));
    return () => {
      live = false;
      stop();
    };
  }, []);

  const signIn = useCallback(async (key: string) => {
    const s = await apiSignIn(key);
    setSession(s);
    return s;
  }, []);

  const signOut = useCallback(async () => {
    try {
      await apiSignOut();
    } finally {
      setSession(null);
    }
  }, []);

  const value = useMemo(() => ({ session, signIn, signOut }), [session, signIn, signOut]);
  return <AuthContext.Provider value={value}>{children}</AuthContext.Provider>;
}

export function useAuth(): Auth {
  const auth = useContext(AuthContext);
  if (!auth) throw new Error("useAuth outside AuthProvider");
  return auth;
}

/** The signed-in session (only under RequireSession). */
export function useSession(): WebSession {
  const { session } = useAuth();
  if (!session) throw new Error("useSession without a session");
  return session;
}

export function RequireSession({ children }: { children: ReactNode }) {
  const { session } = useAuth();
  const location = useLocation();
  if (session === undefined) {
    return (
      <Center h="50vh">
        <Loader />
      </Center>
    );
  }
  if (session === null) {
    const next = location.pathname + location.search;
    return <Navigate to={`/?next=${encodeURIComponent(next)}`} replace />;
  }
  return <>{children}</>;
}
