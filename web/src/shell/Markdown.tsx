/**
 * Markdown written by people and agents (a Proposal's description), rendered safely: no raw HTML
 * (it is dropped, never injected), links only to http(s), mailto and the app's own paths (react-
 * markdown's default URL check drops `javascript:` and the like), no images (an image would load
 * a URL the author chose as soon as the page opens), and links open as plain anchors.
 */
import { Typography } from "@mantine/core";
import ReactMarkdown from "react-markdown";

const NOT_ALLOWED = ["img"];

export function Markdown({ text, testId }: { text: string; testId?: string }) {
  return (
    <Typography data-testid={testId} fz="sm">
      <ReactMarkdown skipHtml disallowedElements={NOT_ALLOWED} unwrapDisallowed>
        {text}
      </ReactMarkdown>
    </Typography>
  );
}
