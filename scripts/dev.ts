import { startServer } from "./local/server";

const signals = ["SIGINT", "SIGTERM"] as const;
const earlier = new Map(signals.map((signal) => [signal, new Set(process.listeners(signal))]));

let stop: (() => Promise<void>) | null = null;
let requested: string | null = null;
let exitCode = 0;
let stopping = false;

/**
 * Stops everything once (at once when started, else as soon as start-up ends), then exits: 0 when
 * asked to stop, 1 when a part of the tree died on its own.
 */
function requestStop(reason: string, code = 0) {
  requested ??= reason;
  exitCode ||= code;
  if (!stop || stopping) return;
  stopping = true;
  console.log(`stopping (${requested})`);
  stop().finally(() => process.exit(exitCode));
}

// Listening from the start: a signal during start-up stops what was started once it is up.
const onSignal = (signal: NodeJS.Signals) => requestStop(signal);
for (const signal of signals) process.on(signal, onSignal);

// `npm start` is npm → this node process (the script execs node: no shell stands between them, and
// npm passes SIGINT and SIGTERM on). Whatever else ends the parent (a shell that dies of a signal
// without passing it on, a wrapper killed outright) would leave this process orphaned, with workerd,
// the pooler and both ports held: a changed parent stops everything too.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) requestStop("parent process exited");
}, 500).unref();

const port = Number(process.env.PORT ?? 8787);
// workerd is a child of this process too: a signal sent to it alone (or a crash) ends the service,
// so the rest of the tree (this process, the database, the pooler, both ports) goes with it.
const server = await startServer({
  port,
  log: (line) => console.log(line),
  onRuntimeExit: () => requestStop("workerd exited", 1),
});

// Miniflare's own SIGINT/SIGTERM listeners call process.exit at once, before an orderly stop could
// close the embedded database; the stop below disposes of Miniflare itself, so theirs go.
for (const signal of signals) {
  for (const listener of process.listeners(signal)) {
    if (listener !== onSignal && !earlier.get(signal)!.has(listener)) process.removeListener(signal, listener);
  }
}
stop = () => server.stop();
if (requested) requestStop(requested);
else console.log(`ready ${server.url}`);
