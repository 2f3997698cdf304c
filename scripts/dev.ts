import { startServer } from "./lib/server";

const port = Number(process.env.PORT ?? 8787);
const server = await startServer({ port, log: (line) => console.log(line) });
console.log(`ready ${server.url}`);

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    server.stop().finally(() => process.exit(0));
  });
}
