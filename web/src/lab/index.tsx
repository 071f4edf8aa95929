/** The retrieval lab (issue 14, item 6). */
export { LabPage } from "./LabPage";
