/// <reference types="vitest/config" />
// Vite builds the app into web/dist for the gateway to serve under /app/ (hashed names in assets/).
// Vitest runs the unit tests of the front-end logic (src/**/*.test.ts) in Node: none needs a DOM
// (jsdom cost 2-3 s per file, 70 s of the 97 s the suite took); a file that does names it in a
// `// @vitest-environment jsdom` comment. Worker threads rather than processes: 16 s rather than 29.
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

export default defineConfig({
  base: "/app/",
  plugins: [react()],
  build: {
    outDir: "dist",
    assetsDir: "assets",
    emptyOutDir: true,
    chunkSizeWarningLimit: 2000,
  },
  server: {
    // `npm run dev` against a running `lorebase up`: the API and the event stream are proxied.
    proxy: { "/api": "http://127.0.0.1:8080" },
  },
  test: {
    environment: "node",
    pool: "threads",
    include: ["src/**/*.test.ts", "src/**/*.test.tsx"],
  },
});
