/** ProposalsPage: placeholder of the scaffold (filled in by the screen's own commit). */
export function ProposalsPage() {
  return <p>ProposalsPage</p>;
}
