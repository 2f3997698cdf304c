import { startServer } from "./local/server";

const signals = ["SIGINT", "SIGTERM"] as const;
const earlier = new Map(signals.map((signal) => [signal, new Set(process.listeners(signal))]));

const port = Number(process.env.PORT ?? 8787);
const server = await startServer({ port, log: (line) => console.log(line) });

// Miniflare's own SIGINT/SIGTERM listeners call process.exit at once, before an orderly stop could
// close the embedded database; the stop below disposes of Miniflare itself, so theirs go.
for (const signal of signals) {
  for (const listener of process.listeners(signal)) if (!earlier.get(signal)!.has(listener)) process.removeListener(signal, listener);
}
console.log(`ready ${server.url}`);

for (const signal of signals) {
  process.once(signal, () => {
    server.stop().finally(() => process.exit(0));
  });
}
