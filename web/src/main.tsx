/** Entry point: Mantine's theme, the router under the Vite base (/app/), and the app. */
import "@mantine/core/styles.css";
import "./app.css";
import { MantineProvider, createTheme } from "@mantine/core";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { BrowserRouter } from "react-router";
import { App } from "./App";

const theme = createTheme({
  // System fonts only: nothing is fetched from outside the gateway (the CSP allows 'self').
  fontFamily: "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif",
  fontFamilyMonospace: "ui-monospace, 'SFMono-Regular', Menlo, Consolas, monospace",
  primaryColor: "indigo",
  // Shade 8 of indigo is 6:1 on white (links and filled buttons meet WCAG AA); shade 6 is 4:1.
  primaryShade: 8,
});

const root = document.getElementById("root");
if (root) {
  createRoot(root).render(
    <StrictMode>
      <MantineProvider theme={theme} defaultColorScheme="light">
        <BrowserRouter basename="/app">
          <App />
        </BrowserRouter>
      </MantineProvider>
    </StrictMode>,
  );
}
