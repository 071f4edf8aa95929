/** ProposalPage: placeholder of the scaffold (filled in by the screen's own commit). */
export function ProposalPage() {
  return <p>ProposalPage</p>;
}
