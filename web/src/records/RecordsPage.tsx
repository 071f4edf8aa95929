/** RecordsPage: placeholder of the scaffold (filled in by the screen's own commit). */
export function RecordsPage() {
  return <p>RecordsPage</p>;
}
