import { relative } from "node:path";
import { buildAll, MAX_BUNDLE_BYTES, MAX_BUNDLE_LABEL } from "./local/build";
import { ROOT } from "./local/functions";

const bundles = await buildAll();
const width = Math.max(...bundles.map((b) => b.name.length), 8);
console.log(`${"function".padEnd(width)}  ${"bytes".padStart(9)}  ${"KiB".padStart(7)}  bundle`);
for (const b of bundles) {
  console.log(
    `${b.name.padEnd(width)}  ${String(b.bytes).padStart(9)}  ${(b.bytes / 1024).toFixed(1).padStart(7)}  ${relative(ROOT, b.path)}`,
  );
}
const oversized = bundles.filter((b) => b.bytes > MAX_BUNDLE_BYTES);
if (oversized.length) {
  console.error(`over the ${MAX_BUNDLE_LABEL} limit: ${oversized.map((b) => b.name).join(", ")}`);
  process.exit(1);
}
