/** RecordPage: placeholder of the scaffold (filled in by the screen's own commit). */
export function RecordPage() {
  return <p>RecordPage</p>;
}
