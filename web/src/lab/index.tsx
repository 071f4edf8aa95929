/** The retrieval lab: placeholder of the scaffold (webreplay replaces it). */
export function LabPage() {
  return <p>Retrieval lab (coming)</p>;
}
