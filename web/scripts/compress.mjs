// After `vite build`: a Brotli copy (`name.br`, quality 11) beside each text file of dist of 1 KiB or
// more, which the gateway sends to a client that accepts br (lorebase_gateway.web_app). Node's own
// zlib: no dependency. Run by `npm run build`.
import { brotliCompressSync, constants } from "node:zlib";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const COMPRESSIBLE = /\.(js|mjs|cjs|css|map|json|svg|txt|xml|webmanifest)$/i;
const MIN_BYTES = 1024;

function* files(directory) {
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) yield* files(path);
    else if (entry.isFile()) yield path;
  }
}

const root = process.argv[2] ?? "dist";
let count = 0;
for (const path of files(root)) {
  if (!COMPRESSIBLE.test(path) || statSync(path).size < MIN_BYTES) continue;
  const body = brotliCompressSync(readFileSync(path), {
    params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: statSync(path).size },
  });
  writeFileSync(`${path}.br`, body);
  count += 1;
}
console.log(`compress: ${count} Brotli copies under ${root}`);
