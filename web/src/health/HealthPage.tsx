/** HealthPage: placeholder of the scaffold (filled in by the screen's own commit). */
export function HealthPage() {
  return <p>HealthPage</p>;
}
