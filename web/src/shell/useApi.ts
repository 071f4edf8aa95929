/**
 * A read from the API as component state: the answer, the problem, whether it is loading, and a
 * reload. The call re-runs when `deps` change; an answer that arrives after the component moved on
 * is dropped.
 */
import { useCallback, useEffect, useState, type DependencyList } from "react";

export interface ApiState<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
  /** Replace the answer held (a live update folded in without a new call). */
  setData: (update: (current: T | undefined) => T | undefined) => void;
}

export function useApi<T>(call: (() => Promise<T>) | null, deps: DependencyList): ApiState<T> {
  const [data, setDataState] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(call !== null);
  const [round, setRound] = useState(0);

  useEffect(() => {
    if (call === null) {
      setLoading(false);
      return;
    }
    let live = true;
    setLoading(true);
    call()
      .then((answer) => {
        if (!live) return;
        setDataState(answer);
        setError(null);
      })
      .catch((problem: unknown) => {
        if (!live) return;
        setError(problem);
      })
      .finally(() => live && setLoading(false));
    return () => {
      live = false;
    };
    // The caller names what the call depends on (`deps`); `call` itself is a new closure each render.
  }, [...deps, round]);

  const reload = useCallback(() => setRound((r) => r + 1), []);
  const setData = useCallback((update: (current: T | undefined) => T | undefined) => setDataState(update), []);
  return { data, error, loading, reload, setData };
}
