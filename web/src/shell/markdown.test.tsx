import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { MantineProvider } from "@mantine/core";
import { Markdown } from "./Markdown";

const html = (text: string) =>
  renderToStaticMarkup(
    <MantineProvider>
      <Markdown text={text} />
    </MantineProvider>,
  );

describe("Markdown", () => {
  it("renders emphasis, lists and paragraphs", () => {
    const out = html("Raise the **risk**.\n\n- one\n- two");
    expect(out).toContain("<strong>risk</strong>");
    expect(out).toContain("<li>one</li>");
    expect(out.match(/<p>/g)?.length).toBe(1);
  });

  it("drops raw HTML, script links and images", () => {
    const out = html('<script>alert(1)</script><b onclick="x()">hi</b> [go](javascript:alert(1)) ![x](https://evil.test/t.png)');
    expect(out).not.toContain("<script");
    expect(out).not.toContain("onclick");
    expect(out).not.toContain("javascript:");
    expect(out).not.toContain("<img");
    expect(out).not.toContain("evil.test");
  });
});
