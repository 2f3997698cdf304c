/**
 * `webhook`: endpoints, secrets, replay and the at_limit threshold (docs/webhooks.md).
 *
 * @example
 * npm run --silent cli -- webhook add --merchant M --env live --url https://example.com/hooks --events mandate.consumed,mandate.revoked --json
 * npm run --silent cli -- webhook rotate --endpoint E --json
 * WEBHOOK_SECRET_KEY=new WEBHOOK_SECRET_KEY_PREVIOUS=old npm run --silent cli -- webhook reseal --json
 * npm run --silent cli -- webhook replay --merchant M --env live --from 2026-11-20T00:00:00Z --to 2026-11-21T00:00:00Z --json
 * npm run --silent cli -- webhook listen --port 8788 --secret whsec_… --count 3 --json
 *
 * Secrets are sealed with WEBHOOK_SECRET_KEY: from the environment, else the one `npm start` keeps
 * in .data/secrets.json, so the worker of that server can open them.
 */

import { createServer } from "node:http";
import { join } from "node:path";
import { rpc } from "../../shared/kernel/db/rpc";
import type { ErrorCode } from "../../shared/kernel/errors";
import { environments } from "../../shared/kernel/principal";
import { UUID } from "../../shared/lib/uuid";
import {
  createEndpoint,
  disableEndpoint,
  EndpointInputError,
  listEndpoints,
  ROTATION_OVERLAP_SECONDS,
  replayEvents,
  resealSecrets,
  rotateEndpointSecret,
} from "../../shared/webhooks/endpoints";
import { SIGNATURE_HEADER, verifyWebhook } from "../../shared/webhooks/signature";
import { localSecrets } from "../local/secrets";
import {
  type CommandGroup,
  choiceFlag,
  cliEnv,
  type Flags,
  failRun,
  listFlag,
  managementApi,
  progress,
  requireFlag,
  usage,
  withDatabase,
} from "./args";

/** The management API, for the commands only it serves: a key is required. */
function api(flags: Flags) {
  const client = managementApi(flags);
  if (!client) throw usage("--api-key (or SERVICE_API_KEY) is required: this command calls the service's management API");
  return client;
}

function endpointPath(flags: Flags, suffix = ""): string {
  return `/webhook_endpoints/${encodeURIComponent(requireFlag(flags, "endpoint"))}${suffix}`;
}

/**
 * With the merchant's own key (`--api-key` or SERVICE_API_KEY), `add`, `list`, `update`, `disable`,
 * `enable`, `rotate`, `test`, `deliveries`, `replay` and `threshold` are clients of the management API
 * (docs/management.md, "Webhooks") in that key's environment, with endpoint ids as it shows them
 * (`we_…`); without one they are the operator's, on the database (`reseal` and `listen` are never
 * the API's).
 */
const webhook: CommandGroup = {
  /** webhook update --api-key K --endpoint E [--url U] [--events a,b | --events all]: a new URL or subscription. */
  async update(flags) {
    const events = listFlag(flags, "events");
    const body = {
      ...(typeof flags.url === "string" ? { url: flags.url.trim() } : {}),
      ...(events ? { event_types: events.length === 1 && events[0] === "all" ? null : events } : {}),
    };
    return api(flags)("POST", endpointPath(flags), body);
  },

  /** webhook enable --api-key K --endpoint E: a disabled endpoint receives events again. */
  async enable(flags) {
    return api(flags)("POST", endpointPath(flags, "/enable"), {});
  },

  /** webhook test --api-key K --endpoint E: a webhook.test event to this endpoint alone. */
  async test(flags) {
    return api(flags)("POST", endpointPath(flags, "/test"), {});
  },

  /** webhook deliveries --api-key K [--endpoint E] [--state S] [--limit N]: the delivery log, newest first, every attempt. */
  async deliveries(flags) {
    const query = new URLSearchParams();
    for (const [flag, param] of [
      ["endpoint", "endpoint_id"],
      ["state", "state"],
      ["limit", "limit"],
      ["cursor", "cursor"],
    ] as const)
      if (typeof flags[flag] === "string") query.set(param, flags[flag] as string);
    return api(flags)("GET", `/webhook_deliveries${query.size ? `?${query}` : ""}`);
  },

  /**
   * webhook add --merchant M --env test|live --url U [--events a,b]: registers an endpoint for every
   * event type (default) or the listed ones, and prints it with its secret, shown this once.
   */
  async add(flags) {
    const client = managementApi(flags);
    if (client) {
      const events = listFlag(flags, "events");
      return client("POST", "/webhook_endpoints", { url: requireFlag(flags, "url").trim(), ...(events ? { event_types: events } : {}) });
    }
    const merchantId = uuidFlag(flags, "merchant");
    const environment = choiceFlag(flags, "env", environments);
    const url = requireFlag(flags, "url").trim();
    const events =
      flags.events === undefined
        ? null
        : requireFlag(flags, "events")
            .split(",")
            .map((type) => type.trim())
            .filter(Boolean);
    const secretKey = webhookSecretKey();
    return withDatabase((sql) =>
      createEndpoint(sql, secretKey, {
        merchantId,
        environment,
        url,
        eventTypes: events,
        allowLoopbackHttp: cliEnv().WEBHOOK_ALLOW_LOOPBACK_HTTP === "1",
      }),
    ).catch(explain("merchant"));
  },

  /** webhook list --merchant M [--env test|live]: endpoints with secret hints (never secrets) and delivery counts. */
  async list(flags) {
    const client = managementApi(flags);
    if (client) return client("GET", "/webhook_endpoints");
    const merchantId = uuidFlag(flags, "merchant");
    const environment = flags.env === undefined ? undefined : choiceFlag(flags, "env", environments);
    const endpoints = await withDatabase((sql) => listEndpoints(sql, merchantId, environment)).catch(explain("merchant"));
    return { merchant_id: merchantId, endpoints };
  },

  /** webhook disable --endpoint E: no more deliveries; pending ones fail and stay replayable. */
  async disable(flags) {
    const client = managementApi(flags);
    if (client) return client("POST", endpointPath(flags, "/disable"), {});
    const endpointId = uuidFlag(flags, "endpoint");
    return withDatabase((sql) => disableEndpoint(sql, endpointId)).catch(explain("endpoint"));
  },

  /**
   * webhook rotate --endpoint E [--overlap-hours 0..24]: a new secret, printed this once; the
   * previous one keeps signing beside it for 24 hours (or the overlap given; 0 cuts it off now).
   */
  async rotate(flags) {
    const client = managementApi(flags);
    if (client) {
      const overlap = flags["overlap-hours"] === undefined ? {} : { overlap_seconds: hoursFlag(flags, "overlap-hours") * 3600 };
      return client("POST", endpointPath(flags, "/rotate_secret"), overlap);
    }
    const endpointId = uuidFlag(flags, "endpoint");
    const overlapSeconds = flags["overlap-hours"] === undefined ? ROTATION_OVERLAP_SECONDS : hoursFlag(flags, "overlap-hours") * 3600;
    const secretKey = webhookSecretKey();
    return withDatabase((sql) => rotateEndpointSecret(sql, secretKey, endpointId, { overlapSeconds })).catch(explain("endpoint"));
  },

  /**
   * webhook reseal: after WEBHOOK_SECRET_KEY changed, with the old key in WEBHOOK_SECRET_KEY_PREVIOUS,
   * seals every stored endpoint secret again under the new key. Idempotent; when it reports no
   * unreadable secrets, WEBHOOK_SECRET_KEY_PREVIOUS can be removed from the workers.
   */
  async reseal() {
    const previous = cliEnv().WEBHOOK_SECRET_KEY_PREVIOUS;
    if (!previous)
      throw usage("set WEBHOOK_SECRET_KEY_PREVIOUS to the key the secrets were sealed under (and WEBHOOK_SECRET_KEY to the new one)");
    const current = webhookSecretKey();
    if (previous === current) throw usage("WEBHOOK_SECRET_KEY_PREVIOUS is the current key: nothing to reseal");
    return withDatabase((sql) => resealSecrets(sql, [current, previous]));
  },

  /**
   * webhook replay --event ID [--endpoint E]
   * webhook replay --merchant M --env test|live --from ISO --to ISO [--endpoint E]
   * Sends the same events again (same id) as new deliveries to the subscribed active endpoints.
   * A range is created_at in [from, to).
   */
  async replay(flags) {
    const client = managementApi(flags);
    if (client) {
      if (typeof flags.delivery === "string") return client("POST", `/webhook_deliveries/${encodeURIComponent(flags.delivery)}/replay`, {});
      const from = timeFlag(flags, "from");
      const to = timeFlag(flags, "to");
      if (from >= to) throw usage("--from must be earlier than --to");
      const endpoint = typeof flags.endpoint === "string" ? { endpoint_id: flags.endpoint } : {};
      return client("POST", "/webhook_events/replay", { from: from.toISOString(), to: to.toISOString(), ...endpoint });
    }
    const endpointId = flags.endpoint === undefined ? undefined : uuidFlag(flags, "endpoint");
    const byRange = ["merchant", "env", "from", "to"].some((name) => flags[name] !== undefined);
    if (flags.event !== undefined && byRange) throw usage("give either --event, or --merchant --env --from --to, not both");
    if (flags.event !== undefined) {
      const eventId = uuidFlag(flags, "event");
      const replayed = await withDatabase((sql) => replayEvents(sql, { eventId, endpointId })).catch(explain("event or endpoint"));
      return { event_id: eventId, ...replayed };
    }
    if (!byRange) throw usage("give --event ID, or --merchant M --env test|live --from ISO --to ISO");
    const merchantId = uuidFlag(flags, "merchant");
    const environment = choiceFlag(flags, "env", environments);
    const from = timeFlag(flags, "from");
    const to = timeFlag(flags, "to");
    if (from >= to) throw usage("--from must be earlier than --to");
    const replayed = await withDatabase((sql) => replayEvents(sql, { merchantId, environment, from, to, endpointId })).catch(
      explain("merchant or endpoint"),
    );
    return { merchant_id: merchantId, environment, from: from.toISOString(), to: to.toISOString(), ...replayed };
  },

  /**
   * webhook threshold --merchant M [--percent 0..99]: reads, or sets, when mandate.at_limit fires:
   * when a consumption leaves at most this percentage of the period's ceiling (0: at zero).
   */
  async threshold(flags) {
    const client = managementApi(flags);
    const percent = flags.percent === undefined ? undefined : integerFlag(flags, "percent", 0, 99);
    if (client)
      return percent === undefined ? client("GET", "/account") : client("POST", "/account", { at_limit_threshold_percent: percent });
    const merchantId = uuidFlag(flags, "merchant");
    return withDatabase((sql) =>
      rpc(sql, "merchant_at_limit_threshold", { merchant_id: merchantId, ...(percent === undefined ? {} : { percent }) }),
    ).catch(explain("merchant"));
  },

  /**
   * webhook listen --secret whsec_…[,whsec_…] [--port 8788] [--count N] [--timeout SECONDS]: a
   * receiver on 127.0.0.1 for local development. Each POST is checked as docs/webhooks.md tells a
   * receiver to (raw body, Service-Signature, any of the secrets given, 300 s tolerance), answered
   * 200 when it verifies and 400 with the reason when not, and logged as one line on stderr. Stops
   * after N verified deliveries, on Ctrl-C (or SIGTERM), or after the timeout (an error when N were
   * asked for and not received), and prints every delivery received; exits 1 when one did not verify.
   */
  async listen(flags) {
    const secrets = requireFlag(flags, "secret")
      .split(",")
      .map((secret) => secret.trim());
    if (secrets.some((secret) => !/^whsec_\S+$/.test(secret)))
      throw usage("--secret must be the endpoint's whsec_… secret (comma-separated for several)");
    const port = flags.port === undefined ? 8788 : integerFlag(flags, "port", 1, 65535);
    const count = flags.count === undefined ? undefined : integerFlag(flags, "count", 1, 100_000);
    const timeoutSeconds = flags.timeout === undefined ? undefined : integerFlag(flags, "timeout", 1, 86_400);

    const deliveries: Delivery[] = [];
    const verifiedCount = () => deliveries.filter((delivery) => delivery.verified).length;
    let finish: (error?: Error) => void = () => {};
    const finished = new Promise<void>((resolve, reject) => {
      finish = (error) => (error ? reject(error) : resolve());
    });
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", async () => {
        if (request.method !== "POST") {
          response.writeHead(405, { allow: "POST" }).end();
          return;
        }
        const raw = Buffer.concat(chunks).toString("utf8");
        const check = await verifyWebhook(raw, request.headers[SIGNATURE_HEADER.toLowerCase()] as string | undefined, secrets);
        const delivery: Delivery = {
          received_at: new Date().toISOString(),
          path: request.url ?? "/",
          verified: check.ok,
          ...(check.ok ? {} : { reason: check.reason }),
          event: parsedOrNull(raw),
        };
        deliveries.push(delivery);
        response.writeHead(check.ok ? 200 : 400, { "content-type": "text/plain" }).end(check.ok ? "ok" : check.reason);
        const event = delivery.event as { id?: unknown; type?: unknown; attempt?: unknown } | null;
        progress(
          `${delivery.received_at} ${String(event?.type ?? "(no type)")} ${String(event?.id ?? "")} attempt ${String(event?.attempt ?? "?")}: ` +
            `${check.ok ? "signature verified" : `signature NOT verified (${check.reason}), answered 400`}\n`,
        );
        if (count !== undefined && verifiedCount() >= count) finish();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", (error) => reject(new Error(`cannot listen on 127.0.0.1:${port}: ${error.message}`)));
      server.listen(port, "127.0.0.1", resolve);
    });
    const url = `http://127.0.0.1:${port}`;
    progress(`listening on ${url}${count === undefined ? " (Ctrl-C stops)" : ` until ${count} verified deliveries`}\n`);
    const stop = () => finish();
    process.once("SIGINT", stop).once("SIGTERM", stop);
    const timer =
      timeoutSeconds === undefined
        ? undefined
        : setTimeout(
            () =>
              finish(
                count === undefined
                  ? undefined
                  : new Error(`timed out after ${timeoutSeconds} s with ${verifiedCount()} of ${count} verified deliveries`),
              ),
            timeoutSeconds * 1000,
          );
    try {
      await finished;
    } finally {
      clearTimeout(timer);
      process.off("SIGINT", stop).off("SIGTERM", stop);
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
    if (deliveries.some((delivery) => !delivery.verified)) failRun();
    return { url, deliveries };
  },
};

/** One request the listener received. */
interface Delivery {
  received_at: string;
  path: string;
  verified: boolean;
  reason?: string;
  /** The envelope as sent (null when the body is not JSON). */
  event: unknown;
}

function parsedOrNull(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return null;
  }
}

/** WEBHOOK_SECRET_KEY from the environment, else the local server's (.data/secrets.json, created if need be). */
function webhookSecretKey(): string {
  const env = cliEnv();
  return env.WEBHOOK_SECRET_KEY ?? localSecrets(env, join(process.cwd(), ".data", "secrets.json")).WEBHOOK_SECRET_KEY;
}

function uuidFlag(flags: Flags, name: string): string {
  const value = requireFlag(flags, name).trim();
  if (!UUID.test(value)) throw usage(`--${name} must be ${name === "merchant" ? "a merchant" : `an ${name}`} id (a UUID)`);
  return value.toLowerCase();
}

function integerFlag(flags: Flags, name: string, min: number, max: number): number {
  const raw = requireFlag(flags, name).trim();
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) throw usage(`--${name} must be an integer from ${min} to ${max}`);
  return Number(raw);
}

function hoursFlag(flags: Flags, name: string): number {
  const raw = requireFlag(flags, name).trim();
  const hours = Number(raw);
  if (!/^\d+(\.\d+)?$/.test(raw) || hours > 24) throw usage(`--${name} must be a number of hours from 0 to 24`);
  return hours;
}

function timeFlag(flags: Flags, name: string): Date {
  const raw = requireFlag(flags, name).trim();
  const at = new Date(raw);
  if (!/^\d{4}-\d{2}-\d{2}/.test(raw) || Number.isNaN(at.getTime()))
    throw usage(`--${name} must be an ISO 8601 time, e.g. 2026-11-21T00:00:00Z`);
  return at;
}

/** Turns the database's refusals into messages about the command's arguments. */
function explain(what: string) {
  return (error: unknown): never => {
    if (error instanceof EndpointInputError) throw usage(`--url or --events: ${error.message}`);
    const code = (error as { code?: ErrorCode | string }).code;
    if (code === "not_found") throw new Error(`unknown ${what}`);
    if (code === "WEBHOOK_ENDPOINT_LIMIT") throw new Error((error as Error).message);
    if (code === "22023") throw new Error((error as Error).message);
    throw error;
  };
}

export default webhook;
