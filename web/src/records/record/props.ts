/** What every tab of the Record page is given. */
import type { ReadPoint } from "../../shell/readPoint";

export interface RecordTabProps {
  domain: string;
  kind: string;
  /** The Record's key (`key` is React's own prop name). */
  recordKey: string;
  point: ReadPoint;
}
