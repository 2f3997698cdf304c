/**
 * `webhook add|list|disable|rotate|reseal|replay|threshold … --json` (the CLI's run, in-process) against the
 * database the service under test uses, with the server's WEBHOOK_SECRET_KEY so its worker can open
 * the secrets the CLI seals. Events are written with private.outbox_emit and marked as fanned out,
 * so no worker pass ever delivers them except through a replay; replay targets are loopback URLs on
 * a closed port, and those endpoints are disabled before each test ends. `webhook listen` is driven
 * by signed requests sent straight to it (the quickstart test has it receive the worker's own).
 */
import { spawn } from "node:child_process";
import { describe, expect, inject, it } from "vitest";
import { freePort } from "../../scripts/local/ports";
import { openEndpointSecret } from "../../shared/webhooks/secret-box";
import { SIGNATURE_HEADER, signWebhook } from "../../shared/webhooks/signature";
import { merchantFactory, testDb } from "../harness/factories";
import { childEnv, ROOT, cli as spawnCli } from "../harness/spawn";

const CLOSED_PORT_URL = "http://127.0.0.1:9/hooks";
/** `webhook listen` is a process of its own (a second or more on a busy machine). */
const SLOW = { timeout: 90_000 };

function cli(args: string[], env: Record<string, string | undefined> = {}) {
  return spawnCli(["webhook", ...args, "--json"], {
    DATABASE_URL: inject("databaseUrl"),
    WEBHOOK_SECRET_KEY: inject("serverBindings").WEBHOOK_SECRET_KEY,
    WEBHOOK_ALLOW_LOOPBACK_HTTP: "1",
    ...env,
  });
}

async function ok(args: string[], env?: Record<string, string | undefined>) {
  const result = await cli(args, env);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout);
}

async function refused(args: string[], code: number, message: RegExp, env?: Record<string, string | undefined>) {
  const result = await cli(args, env);
  expect(result.stdout).toBe("");
  expect(result.stderr).toMatch(message);
  expect(result.code, result.stderr).toBe(code);
}

/** An event already past fan-out: only a replay can deliver it. */
async function pastEvent(merchantId: string, createdAt: string, environment = "test"): Promise<string> {
  const sql = testDb();
  const [row] =
    await sql`select private.outbox_emit(${merchantId}::uuid, ${environment}, 'mandate.revoked', '{"granted_to":"agent_1"}'::jsonb, ${createdAt}::timestamptz) as id`;
  await sql`update private.outbox_events set fanned_out_at = created_at where id = ${row.id}::uuid`;
  return row.id as string;
}

describe("webhook add and list", () => {
  it("registers an https endpoint for every event type and shows its secret once", SLOW, async () => {
    const { merchant_id } = await merchantFactory();
    const added = await ok(["add", "--merchant", merchant_id, "--env", "live", "--url", "https://hooks.example.com/in"]);
    expect(added).toMatchObject({
      merchant_id,
      environment: "live",
      url: "https://hooks.example.com/in",
      event_types: null,
      status: "active",
      deliveries: { pending: 0, succeeded: 0, failed: 0 },
    });
    expect(added.secret).toMatch(/^whsec_[0-9A-Za-z]{43}$/);
    expect(added.secrets).toEqual([{ hint: `whsec_…${added.secret.slice(-4)}`, created_at: expect.any(String), expires_at: null }]);

    // stored sealed, and it opens under the worker's key to exactly the secret shown
    const [row] = await testDb()`select sealed_secret from private.webhook_endpoint_secrets where endpoint_id = ${added.endpoint_id}::uuid`;
    expect(row.sealed_secret).not.toContain(added.secret.slice(6));
    expect(await openEndpointSecret([inject("serverBindings").WEBHOOK_SECRET_KEY], added.endpoint_id, row.sealed_secret)).toBe(
      added.secret,
    );

    const listed = await ok(["list", "--merchant", merchant_id]);
    expect(listed.endpoints).toHaveLength(1);
    expect(JSON.stringify(listed)).not.toContain(added.secret);
    expect(listed.endpoints[0]).toMatchObject({ endpoint_id: added.endpoint_id, secrets: added.secrets });
    expect((await ok(["list", "--merchant", merchant_id, "--env", "test"])).endpoints).toEqual([]);
  });

  it("subscribes to the listed event types only", SLOW, async () => {
    const { merchant_id } = await merchantFactory();
    const added = await ok([
      "add",
      "--merchant",
      merchant_id,
      "--env",
      "test",
      "--url",
      "https://hooks.example.com/x",
      "--events",
      "mandate.consumed, mandate.at_limit",
    ]);
    expect(added.event_types).toEqual(["mandate.consumed", "mandate.at_limit"]);
  });

  it("refuses bad arguments with a clear message and exit code 2", SLOW, async () => {
    const { merchant_id } = await merchantFactory();
    const base = ["add", "--merchant", merchant_id, "--env", "test"];
    await Promise.all([
      refused(["add", "--env", "test", "--url", "https://a.example.com/"], 2, /--merchant <value> is required/),
      refused(["add", "--merchant", "nope", "--env", "test", "--url", "https://a.example.com/"], 2, /--merchant must be a merchant id/),
      refused(["add", "--merchant", merchant_id, "--env", "prod", "--url", "https://a.example.com/"], 2, /--env must be one of test, live/),
      refused([...base], 2, /--url <value> is required/),
      refused([...base, "--url", "http://hooks.example.com/in"], 2, /http is accepted only for loopback hosts/),
      refused([...base, "--url", "http://127.0.0.1:8080/in"], 2, /WEBHOOK_ALLOW_LOOPBACK_HTTP=1/, {
        WEBHOOK_ALLOW_LOOPBACK_HTTP: undefined,
      }),
      refused(
        [...base, "--url", "https://a.example.com/", "--events", "mandate.revoked,mandate.exploded"],
        2,
        /unknown event type mandate\.exploded; known: mandate\.granted/,
      ),
      refused(
        ["frobnicate"],
        2,
        /unknown command "webhook frobnicate"; commands: update, enable, test, deliveries, add, list, disable, rotate, reseal, replay, threshold, listen/,
      ),
    ]);
    expect((await ok(["list", "--merchant", merchant_id])).endpoints).toEqual([]);
  });

  it("answers an unknown merchant with exit code 1", SLOW, async () => {
    await Promise.all([
      refused(["add", "--merchant", crypto.randomUUID(), "--env", "test", "--url", "https://a.example.com/"], 1, /unknown merchant/),
      refused(["list", "--merchant", crypto.randomUUID()], 1, /unknown merchant/),
    ]);
  });
});

describe("webhook rotate and disable", () => {
  it("rotates: a new secret shown once, the previous one valid for 24 hours beside it, or cut off at once", SLOW, async () => {
    const { merchant_id } = await merchantFactory();
    const added = await ok(["add", "--merchant", merchant_id, "--env", "test", "--url", "https://hooks.example.com/r"]);
    const before = Date.now();
    const rotated = await ok(["rotate", "--endpoint", added.endpoint_id]);
    expect(rotated.secret).toMatch(/^whsec_[0-9A-Za-z]{43}$/);
    expect(rotated.secret).not.toBe(added.secret);
    const validUntil = new Date(rotated.previous_valid_until).getTime();
    expect(validUntil - before).toBeGreaterThan(24 * 3600_000 - 60_000);
    expect(validUntil - before).toBeLessThanOrEqual(24 * 3600_000 + 60_000);
    expect(rotated.secrets.map((s: { hint: string }) => s.hint)).toEqual([
      `whsec_…${rotated.secret.slice(-4)}`,
      `whsec_…${added.secret.slice(-4)}`,
    ]);

    const cut = await ok(["rotate", "--endpoint", added.endpoint_id, "--overlap-hours", "0"]); // a leaked secret: every earlier one stops now
    expect(cut.secrets.map((s: { hint: string }) => s.hint)).toEqual([`whsec_…${cut.secret.slice(-4)}`]);
    await Promise.all([
      refused(
        ["rotate", "--endpoint", added.endpoint_id, "--overlap-hours", "25"],
        2,
        /--overlap-hours must be a number of hours from 0 to 24/,
      ),
      refused(["rotate", "--endpoint", crypto.randomUUID()], 1, /unknown endpoint/),
    ]);
  });

  it("disables an endpoint once and says so the second time", SLOW, async () => {
    const { merchant_id } = await merchantFactory();
    const added = await ok(["add", "--merchant", merchant_id, "--env", "test", "--url", "https://hooks.example.com/d"]);
    expect(await ok(["disable", "--endpoint", added.endpoint_id])).toMatchObject({
      status: "disabled",
      disabled_reason: "manual",
      already_disabled: false,
    });
    expect(await ok(["disable", "--endpoint", added.endpoint_id])).toMatchObject({ status: "disabled", already_disabled: true });
    await Promise.all([
      refused(["disable", "--endpoint", crypto.randomUUID()], 1, /unknown endpoint/),
      refused(["disable"], 2, /--endpoint <value> is required/),
    ]);
  });
});

describe("webhook reseal", () => {
  it("seals the secrets of an old WEBHOOK_SECRET_KEY again under the new one, once", SLOW, async () => {
    const newKey = inject("serverBindings").WEBHOOK_SECRET_KEY;
    const oldKey = `old-${crypto.randomUUID()}-webhook-key`;
    const { merchant_id } = await merchantFactory();
    const added = await ok(["add", "--merchant", merchant_id, "--env", "test", "--url", "https://hooks.example.com/k"], {
      WEBHOOK_SECRET_KEY: oldKey,
    });
    const rotated = await ok(["rotate", "--endpoint", added.endpoint_id], { WEBHOOK_SECRET_KEY: oldKey });
    const sealed = async () =>
      (await testDb()`select id, sealed_secret from private.webhook_endpoint_secrets where endpoint_id = ${added.endpoint_id}::uuid order by created_at`) as unknown as Array<{
        id: string;
        sealed_secret: string;
      }>;
    const before = await sealed();
    await expect(openEndpointSecret([newKey], added.endpoint_id, before[0]!.sealed_secret)).rejects.toThrow();

    const first = await ok(["reseal"], { WEBHOOK_SECRET_KEY_PREVIOUS: oldKey });
    expect(first.resealed).toBeGreaterThanOrEqual(2);
    expect(first.unreadable.map((u: { endpoint_id: string }) => u.endpoint_id)).not.toContain(added.endpoint_id);
    const after = await sealed();
    expect(after.map((row) => row.id)).toEqual(before.map((row) => row.id));
    expect(await Promise.all(after.map((row) => openEndpointSecret([newKey], added.endpoint_id, row.sealed_secret)))).toEqual([
      added.secret,
      rotated.secret,
    ]);

    const again = await ok(["reseal"], { WEBHOOK_SECRET_KEY_PREVIOUS: oldKey });
    expect(again.current).toBeGreaterThanOrEqual(2);
    expect(await sealed()).toEqual(after);
    await ok(["disable", "--endpoint", added.endpoint_id]);
  });

  it("needs the previous key, and a different one", SLOW, async () => {
    await Promise.all([
      refused(["reseal"], 2, /set WEBHOOK_SECRET_KEY_PREVIOUS/),
      refused(["reseal"], 2, /WEBHOOK_SECRET_KEY_PREVIOUS is the current key/, {
        WEBHOOK_SECRET_KEY_PREVIOUS: inject("serverBindings").WEBHOOK_SECRET_KEY,
      }),
    ]);
  });
});

describe("webhook replay", () => {
  it("replays one event, or a range of one environment, as new deliveries of the same event ids", SLOW, async () => {
    const { merchant_id } = await merchantFactory();
    const sandbox = await ok(["add", "--merchant", merchant_id, "--env", "test", "--url", CLOSED_PORT_URL]);
    const live = await ok(["add", "--merchant", merchant_id, "--env", "live", "--url", CLOSED_PORT_URL]);
    const first = await pastEvent(merchant_id, "2026-11-01T10:00:00Z");
    const second = await pastEvent(merchant_id, "2026-11-01T11:00:00Z");
    await pastEvent(merchant_id, "2026-11-01T12:00:00Z");
    await pastEvent(merchant_id, "2026-11-01T10:30:00Z", "live");

    expect(await ok(["replay", "--event", first])).toEqual({ event_id: first, events: 1, deliveries: 1 });
    expect(
      await ok(["replay", "--merchant", merchant_id, "--env", "test", "--from", "2026-11-01T10:00:00Z", "--to", "2026-11-01T12:00:00Z"]),
    ).toEqual({
      merchant_id,
      environment: "test",
      from: "2026-11-01T10:00:00.000Z",
      to: "2026-11-01T12:00:00.000Z",
      events: 2,
      deliveries: 2,
    });
    const rows =
      await testDb()`select event_id, endpoint_id, origin, state from private.webhook_deliveries where merchant_id = ${merchant_id}::uuid`;
    expect(rows.map((r) => r.event_id).sort()).toEqual([first, first, second].sort());
    expect(rows.every((r) => r.origin === "replay" && r.endpoint_id === sandbox.endpoint_id && r.state === "pending")).toBe(true);

    // disabling fails what is still pending (and keeps it replayable)
    expect(await ok(["disable", "--endpoint", sandbox.endpoint_id])).toMatchObject({ failed_deliveries: 3 });
    expect(await ok(["replay", "--event", first])).toEqual({ event_id: first, events: 1, deliveries: 0 });
    const [listed] = (await ok(["list", "--merchant", merchant_id, "--env", "test"])).endpoints;
    expect(listed.deliveries).toEqual({ pending: 0, succeeded: 0, failed: 3 });
    // not only a count: the latest failure and why
    expect(listed.last_error).toMatchObject({ state: "failed", status: null, error: "endpoint disabled" });
    expect([first, second]).toContain(listed.last_error.event_id);
    await ok(["disable", "--endpoint", live.endpoint_id]);
  });

  it("refuses an unclear or impossible replay", SLOW, async () => {
    const { merchant_id } = await merchantFactory();
    const event = await pastEvent(merchant_id, "2026-11-01T10:00:00Z");
    const range = ["--merchant", merchant_id, "--env", "test", "--from", "2026-11-01T00:00:00Z", "--to", "2026-11-02T00:00:00Z"];
    await Promise.all([
      refused(["replay"], 2, /give --event ID, or --merchant M --env test\|live --from ISO --to ISO/),
      refused(["replay", "--event", event, ...range], 2, /either --event, or --merchant --env --from --to, not both/),
      refused(["replay", ...range.slice(0, 6), "--to", "2026-10-01T00:00:00Z"], 2, /--from must be earlier than --to/),
      refused(
        ["replay", ...range.slice(0, 4), "--from", "yesterday", "--to", "2026-11-02T00:00:00Z"],
        2,
        /--from must be an ISO 8601 time/,
      ),
      refused(["replay", "--event", crypto.randomUUID()], 1, /unknown event/),
    ]);
    expect(await ok(["replay", ...range])).toMatchObject({ events: 1, deliveries: 0 }); // no endpoint: nothing to send
  });
});

describe("webhook threshold", () => {
  it("reads and sets when mandate.at_limit fires", SLOW, async () => {
    const { merchant_id } = await merchantFactory();
    expect(await ok(["threshold", "--merchant", merchant_id])).toEqual({ merchant_id, at_limit_threshold_percent: 20 });
    expect(await ok(["threshold", "--merchant", merchant_id, "--percent", "35"])).toEqual({ merchant_id, at_limit_threshold_percent: 35 });
    expect(await ok(["threshold", "--merchant", merchant_id])).toEqual({ merchant_id, at_limit_threshold_percent: 35 });
    await Promise.all([
      refused(["threshold", "--merchant", merchant_id, "--percent", "100"], 2, /--percent must be an integer from 0 to 99/),
      refused(["threshold", "--merchant", crypto.randomUUID(), "--percent", "5"], 1, /unknown merchant/),
    ]);
  });
});

describe("webhook listen", () => {
  /** `webhook listen` with `args`, started: resolves once it listens, with what it printed when it ends. */
  async function listen(args: string[]) {
    const port = await freePort();
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "scripts/cli.ts", "webhook", "listen", "--port", String(port), ...args, "--json"],
      {
        cwd: ROOT,
        env: childEnv() as NodeJS.ProcessEnv,
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    const ended = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
      child.once("close", (code) => resolve({ code, stdout, stderr })),
    );
    await new Promise<void>((resolve, reject) => {
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
        stderr += chunk;
        if (stderr.includes("listening on")) resolve();
      });
      ended.then(({ stderr }) => reject(new Error(`webhook listen ended before listening:\n${stderr}`)));
    });
    /** POSTs `body` signed with `secrets` at `timestamp`; the listener's status and answer. */
    const deliver = async (body: string, secrets: string[], timestamp = Math.floor(Date.now() / 1000)) => {
      const res = await fetch(`http://127.0.0.1:${port}/webhooks`, {
        method: "POST",
        headers: { "content-type": "application/json", [SIGNATURE_HEADER]: await signWebhook(body, secrets, timestamp) },
        body,
      });
      return { status: res.status, text: await res.text() };
    };
    return { url: `http://127.0.0.1:${port}`, deliver, ended, child };
  }

  const secret = `whsec_${"A".repeat(43)}`;
  const envelope = (type: string) =>
    JSON.stringify({ id: crypto.randomUUID(), type, created_at: new Date().toISOString(), attempt: 1, data: {} });

  it("verifies each delivery with the secret, refuses forged and stale ones, and stops after --count verified", SLOW, async () => {
    const listener = await listen(["--secret", secret, "--count", "2"]);
    const granted = envelope("mandate.granted");
    expect(await listener.deliver(granted, [secret])).toEqual({ status: 200, text: "ok" });
    expect(await listener.deliver(envelope("mandate.consumed"), [`whsec_${"B".repeat(43)}`])).toEqual({
      status: 400,
      text: "no_matching_signature",
    });
    const stale = await listener.deliver(envelope("mandate.consumed"), [secret], Math.floor(Date.now() / 1000) - 301);
    expect(stale).toEqual({ status: 400, text: "timestamp_out_of_tolerance" });
    expect(await listener.deliver(envelope("mandate.revoked"), [secret])).toEqual({ status: 200, text: "ok" });

    const { code, stdout, stderr } = await listener.ended;
    const printed = JSON.parse(stdout);
    expect(printed.url).toBe(listener.url);
    expect(printed.deliveries.map((d: { event: { type: string }; verified: boolean }) => [d.event.type, d.verified])).toEqual([
      ["mandate.granted", true],
      ["mandate.consumed", false],
      ["mandate.consumed", false],
      ["mandate.revoked", true],
    ]);
    expect(printed.deliveries[0]).toMatchObject({ path: "/webhooks", event: JSON.parse(granted) });
    expect(printed.deliveries[1].reason).toBe("no_matching_signature");
    expect(stderr).toMatch(/mandate\.granted \S+ attempt 1: signature verified/);
    expect(stderr).toMatch(/mandate\.consumed \S+ attempt 1: signature NOT verified \(no_matching_signature\), answered 400/);
    // one delivery did not verify: the run is not a success
    expect(code, stderr).toBe(1);
  });

  it("accepts either secret during a rotation and exits 0 when every delivery verified", SLOW, async () => {
    const previous = `whsec_${"C".repeat(43)}`;
    const listener = await listen(["--secret", `${secret},${previous}`, "--count", "2"]);
    expect((await listener.deliver(envelope("mandate.granted"), [previous])).status).toBe(200);
    expect((await listener.deliver(envelope("mandate.revoked"), [secret, previous])).status).toBe(200);
    const { code, stdout, stderr } = await listener.ended;
    expect(code, stderr).toBe(0);
    expect(JSON.parse(stdout).deliveries.map((d: { verified: boolean }) => d.verified)).toEqual([true, true]);
  });

  it("gives up after --timeout when fewer than --count verified deliveries came", SLOW, async () => {
    const listener = await listen(["--secret", secret, "--count", "2", "--timeout", "1"]);
    expect((await listener.deliver(envelope("mandate.granted"), [secret])).status).toBe(200);
    const { code, stdout, stderr } = await listener.ended;
    expect(stdout).toBe("");
    expect(stderr).toMatch(/timed out after 1 s with 1 of 2 verified deliveries/);
    expect(code).toBe(1);
  });

  it("refuses a missing or malformed secret and a bad port with exit code 2", SLOW, async () => {
    await refused(["listen"], 2, /--secret <value> is required/);
    await refused(["listen", "--secret", "null"], 2, /--secret must be the endpoint's whsec_… secret/);
    await refused(["listen", "--secret", secret, "--port", "70000"], 2, /--port must be an integer from 1 to 65535/);
  });
});
