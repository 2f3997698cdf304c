import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { timingSafeEqual } from "../../shared/lib/crypto";
import { RespConnection, RespError, type RespValue } from "./resp";

interface BridgeOptions {
  redisUrl?: string;
  token: string;
  port?: number;
  host?: string;
}

export interface RunningBridge {
  url: string;
  token: string;
  stop(): Promise<void>;
}

type Command = (string | number)[];

/**
 * Speaks the Upstash REST protocol in front of a real Redis: `POST /` with one command,
 * `POST /pipeline`, `POST /multi-exec`, bearer-token auth and `Upstash-Encoding: base64`
 * responses, so @upstash/redis and @upstash/ratelimit run unchanged against it.
 */
export async function startRedisRestBridge({
  redisUrl = "redis://127.0.0.1:6379",
  token,
  port = 0,
  host = "127.0.0.1",
}: BridgeOptions): Promise<RunningBridge> {
  const idle: RespConnection[] = [];
  const acquire = async () => {
    let connection = idle.pop();
    while (connection && !connection.usable) connection = idle.pop();
    return connection ?? RespConnection.open(redisUrl);
  };
  const release = (connection: RespConnection) => {
    if (connection.usable && idle.length < 32) idle.push(connection);
    else connection.close();
  };

  const scripts = new ScriptTranslator();
  const server = createServer((req, res) => {
    handle(req, res).catch((error) => reply(res, 500, { error: String((error as Error).message) }));
  });

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const auth = req.headers.authorization ?? "";
    if (!timingSafeEqual(auth, `Bearer ${token}`)) return reply(res, 401, { error: "Unauthorized" });
    const body = await readBody(req);
    const base64 = String(req.headers["upstash-encoding"] ?? "").toLowerCase() === "base64";
    const path = (req.url ?? "/").split("?")[0].replace(/\/+$/, "");
    const connection = await acquire();
    try {
      if (path === "/pipeline" || path === "/multi-exec") {
        const commands = body as Command[];
        if (!Array.isArray(commands) || !commands.every(isCommand)) return reply(res, 400, { error: "ERR invalid pipeline" });
        const transactional = path === "/multi-exec";
        if (transactional) await connection.send(["MULTI"]);
        const queued = await Promise.all(commands.map((command) => connection.send(scripts.translate(command))));
        let results = queued;
        if (transactional) {
          const executed = await connection.send(["EXEC"]);
          results = Array.isArray(executed) ? executed : queued;
        }
        return reply(
          res,
          200,
          results.map((value) => toEntry(value, base64)),
        );
      }
      const command = path === "" ? (body as Command) : path.slice(1).split("/").map(decodeURIComponent);
      if (!isCommand(command)) return reply(res, 400, { error: "ERR invalid command" });
      const entry = toEntry(await connection.send(scripts.translate(command)), base64);
      return reply(res, "error" in entry ? 400 : 200, entry);
    } finally {
      release(connection);
    }
  }

  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  const address = server.address() as AddressInfo;
  return {
    url: `http://${host}:${address.port}`,
    token,
    async stop() {
      await new Promise((resolve) => server.close(resolve));
      for (const connection of idle.splice(0)) connection.close();
    },
  };
}

/**
 * Upstash accepts Lua shebang flags that open-source Redis 7.0 rejects (`allow-key-locking`).
 * Scripts are forwarded without those flags, and EVALSHA digests of the original text are mapped
 * to the digest Redis knows, so clients keep their EVALSHA-then-EVAL behaviour.
 */
class ScriptTranslator {
  private readonly digests = new Map<string, string>();

  translate(command: Command): Command {
    const name = String(command[0]).toUpperCase();
    const isLoad = name === "SCRIPT" && String(command[1]).toUpperCase() === "LOAD";
    const scriptIndex = name === "EVAL" || name === "EVAL_RO" ? 1 : isLoad ? 2 : -1;
    if (scriptIndex > 0) {
      const original = String(command[scriptIndex]);
      const forwarded = original.replace(/^#!lua[^\n]*\n/, "");
      if (forwarded !== original) this.digests.set(sha1(original), sha1(forwarded));
      return command.map((part, i) => (i === scriptIndex ? forwarded : part));
    }
    if (name === "EVALSHA" || name === "EVALSHA_RO") {
      const digest = this.digests.get(String(command[1]).toLowerCase());
      if (digest) return command.map((part, i) => (i === 1 ? digest : part));
    }
    return command;
  }
}

function sha1(text: string): string {
  return createHash("sha1").update(text).digest("hex");
}

function isCommand(value: unknown): value is Command {
  return Array.isArray(value) && value.length > 0 && value.every((part) => typeof part === "string" || typeof part === "number");
}

function toEntry(value: RespValue, base64: boolean): { result: unknown } | { error: string } {
  return value instanceof RespError ? { error: value.message } : { result: encode(value, base64) };
}

function encode(value: RespValue, base64: boolean): unknown {
  if (typeof value === "string") return base64 ? Buffer.from(value, "utf8").toString("base64") : value;
  if (Array.isArray(value)) return value.map((item) => encode(item, base64));
  if (value instanceof RespError) return value.message;
  return value;
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function reply(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}
