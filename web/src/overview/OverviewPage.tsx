/** OverviewPage: placeholder of the scaffold (filled in by the screen's own commit). */
export function OverviewPage() {
  return <p>OverviewPage</p>;
}
