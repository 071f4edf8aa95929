/**
 * The Domain last opened, so `/app/` can go back to it. Only the Domain's name is remembered
 * (localStorage); never a key or a token.
 */
const STORAGE = "lorebase.lastDomain";

export function lastDomain(): string {
  try {
    return window.localStorage.getItem(STORAGE) ?? "";
  } catch {
    return "";
  }
}

export function rememberDomain(domain: string): void {
  try {
    window.localStorage.setItem(STORAGE, domain);
  } catch {
    // Storage refused (private mode): the sign-in page asks for the Domain again.
  }
}
