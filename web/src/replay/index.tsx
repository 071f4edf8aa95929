/** The agent sessions list and the replay: placeholders of the scaffold (webreplay replaces them). */
export function SessionsPage() {
  return <p>Agent sessions (coming)</p>;
}

export function ReplayPage() {
  return <p>Session replay (coming)</p>;
}
