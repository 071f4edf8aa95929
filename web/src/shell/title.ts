/** The document's title per page: "<page> · Lorebase". */
import { useEffect } from "react";

export function usePageTitle(...parts: Array<string | undefined | null>): void {
  const title = [...parts.filter((p): p is string => Boolean(p)), "Lorebase"].join(" · ");
  useEffect(() => {
    document.title = title;
  }, [title]);
}
