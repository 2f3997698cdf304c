/**
 * `npm run conformance`: the official MCP conformance suite against this service.
 *
 * Starts the service as `npm start` does (DATABASE_URL, else a throwaway embedded database), makes
 * a merchant whose owner is a sandbox person, and then runs `@modelcontextprotocol/conformance`
 * (a pinned devDependency; it needs Node 22, run from the `node` package of the npm registry through npx):
 * - `server` mode, scenario by scenario, against the MCP endpoint through a loopback proxy that adds
 *   an access token the owner granted (the suite has no way to send one; the server it tests is
 *   the real one, authorization included);
 * - `authorization` mode against the authorization server: the suite registers nothing, so the
 *   client it names was registered by DCR here, and the owner's part (sign-in, consent) is done
 *   by this script when the suite prints the authorization URL.
 * Prints one line per scenario and exits 1 when a scenario that applies did not pass. Which
 * scenarios apply, and why the others do not: docs/mcp.md, "The conformance suite".
 */
import { spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { connect } from "../shared/kernel/db/client";
import { addOwner, createMerchant } from "../shared/merchants/accounts";
import { simulateCapture } from "../shared/simulator";
import { NODE_22 } from "./local/node22";
import { freePort } from "./local/ports";
import { startServer } from "./local/server";

/** The suite itself is a devDependency (pinned, its dependencies locked); run by that Node. */
const SUITE = createRequire(import.meta.url).resolve("@modelcontextprotocol/conformance/dist/index.js");

/** Server scenarios that apply to this server (the rest test features it does not have: docs/mcp.md). */
/** The revisions whose requirement sets the server is run against (each at its own wire version). */
const REVISIONS = ["2025-11-25", "2026-07-28"];
/** What the suite may fail here, each with its reason (docs/mcp.md lists every scenario's result). */
const BASELINE = new URL("./conformance-baseline.yml", import.meta.url).pathname;

interface Outcome {
  mode: string;
  label: string;
  /** The suite's verdict with the baseline: every failure expected, no expected failure passing. */
  passed: boolean;
  scenarios: string[];
}

async function main() {
  const env: Record<string, string | undefined> = { ...process.env, CRON_TIMER: "0" };
  if (!env.DATABASE_URL) Object.assign(env, { PGLITE_DATA_DIR: "memory://", PGPORT_EMBEDDED: String(await freePort()) });
  const server = await startServer({ port: await freePort(), env, log: (line) => console.error(line) });
  const base = server.url;
  const mcpUrl = `${base}/functions/v1/mcp`;
  const outcomes: Outcome[] = [];
  try {
    const owner = await makeOwner(base, server.databaseUrl);
    const callbackPort = await freePort();
    const client = await register(base, [`http://127.0.0.1:${callbackPort}/callback`, "http://127.0.0.1:9/callback"]);
    const token = await grant(base, client, owner, "http://127.0.0.1:9/callback");

    const proxy = await tokenProxy(mcpUrl, token);
    try {
      for (const revision of REVISIONS) {
        const args = ["server", "--url", proxy.url, "--requirements", revision, "--expected-failures", BASELINE];
        outcomes.push(await runSuite("server", revision, args));
      }
    } finally {
      proxy.close();
    }
    // Every authorization scenario, in one run: the code grant reads what the metadata scenario fetched.
    const args = ["authorization", "--url", base, "--client-id", client, "--resource", mcpUrl, "--port", String(callbackPort)];
    outcomes.push(await runSuite("authorization", "every scenario", args, (url) => ownerApproves(url, owner)));
  } finally {
    await server.stop();
  }
  for (const o of outcomes) {
    console.log(
      `\n${o.passed ? "PASS" : "FAIL"}  ${o.mode} ${o.label}${o.passed ? "" : " (a failure the baseline does not expect, or an expected one that passed)"}`,
    );
    for (const line of o.scenarios) console.log(line);
  }
  process.exitCode = outcomes.every((o) => o.passed) ? 0 : 1;
}

/** A merchant whose owner is sandbox person 7, enrolled with its sandbox key: the owner's session token. */
async function makeOwner(base: string, databaseUrl: string): Promise<string> {
  const sql = connect(databaseUrl, { pooled: true });
  try {
    const merchant = await createMerchant(sql, "Conformance shop");
    const capture = simulateCapture({ person: 7, nonce: crypto.randomUUID().replaceAll("-", ""), capturedAt: new Date().toISOString() });
    const enrolled = await fetch(`${base}/functions/v1/process-biovital-enrollment`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-service-api-key": merchant.keys.pk_test },
      body: JSON.stringify({
        capture_nonce: capture.capture_nonce,
        face_template: capture,
        consent: { version: "2026-11", retention_days: 365 },
      }),
    });
    const body = (await enrolled.json()) as { subject_ref?: string };
    if (enrolled.status !== 200 || !body.subject_ref) throw new Error(`enrolment failed: ${enrolled.status} ${JSON.stringify(body)}`);
    await addOwner(sql, merchant.merchant_id, body.subject_ref, new Date());
    return enrolled.headers.get("x-session-token")!;
  } finally {
    await sql.end();
  }
}

/** Dynamic client registration (RFC 7591) of a public client: its client_id. */
async function register(base: string, redirectUris: string[]): Promise<string> {
  const res = await fetch(`${base}/functions/v1/mcp/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ client_name: "Conformance suite", redirect_uris: redirectUris, token_endpoint_auth_method: "none" }),
  });
  const body = (await res.json()) as { client_id?: string };
  if (res.status !== 201 || !body.client_id) throw new Error(`registration failed: ${res.status} ${JSON.stringify(body)}`);
  return body.client_id;
}

/** The owner's part at an authorization URL: signed in with the session token, approve; the redirect it answers. */
async function ownerApproves(url: string, sessionToken: string): Promise<URL> {
  const page = await fetch(url, { headers: { authorization: `Bearer ${sessionToken}` } });
  const html = await page.text();
  const handle = /name="handle" value="([^"]+)"/.exec(html)?.[1];
  const merchantId = /name="merchant_id" value="([^"]+)"/.exec(html)?.[1];
  if (page.status !== 200 || !handle || !merchantId) throw new Error(`no consent screen: ${page.status}`);
  const cookie = page.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
  const form = new URLSearchParams({ handle, session_token: sessionToken, merchant_id: merchantId, decision: "approve" });
  for (const scope of [...html.matchAll(/name="scope" value="([^"]+)"/g)].map((m) => m[1])) form.append("scope", scope);
  const answer = await fetch(url, { method: "POST", body: form, headers: { cookie }, redirect: "manual" });
  const location = answer.headers.get("location");
  if (answer.status !== 302 || !location) throw new Error(`consent not accepted: ${answer.status}`);
  return new URL(location);
}

/** Authorization code with PKCE for `client`, approved by the owner: an access token for the MCP endpoint. */
async function grant(base: string, client: string, sessionToken: string, redirectUri: string): Promise<string> {
  const verifier = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
  const challenge = Buffer.from(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))).toString("base64url");
  const resource = `${base}/functions/v1/mcp`;
  const query = new URLSearchParams({
    response_type: "code",
    client_id: client,
    redirect_uri: redirectUri,
    code_challenge: challenge,
    code_challenge_method: "S256",
    scope: "mandates:read mandates:write",
    state: "conformance",
    resource,
  });
  const redirect = await ownerApproves(`${base}/functions/v1/mcp/oauth/authorize?${query}`, sessionToken);
  const res = await fetch(`${base}/functions/v1/mcp/oauth/token`, {
    method: "POST",
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code: redirect.searchParams.get("code") ?? "",
      redirect_uri: redirectUri,
      code_verifier: verifier,
      client_id: client,
      resource,
    }),
  });
  const tokens = (await res.json()) as { access_token?: string };
  if (res.status !== 200 || !tokens.access_token) throw new Error(`token exchange failed: ${res.status} ${JSON.stringify(tokens)}`);
  return tokens.access_token;
}

/** A loopback proxy to the MCP endpoint that adds `Authorization: Bearer <token>`; every other header passes as sent. */
async function tokenProxy(target: string, token: string): Promise<{ url: string; close(): void }> {
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined && !["connection", "content-length", "transfer-encoding"].includes(name)) {
        headers.set(name, Array.isArray(value) ? value.join(", ") : value);
      }
    }
    headers.set("authorization", `Bearer ${token}`);
    const upstream = new AbortController();
    res.on("close", () => upstream.abort());
    try {
      const answer = await fetch(target, {
        method: req.method,
        headers,
        body: req.method === "GET" || req.method === "HEAD" ? undefined : Buffer.concat(chunks),
        signal: upstream.signal,
      });
      const out: Record<string, string> = {};
      answer.headers.forEach((value, name) => {
        if (!["content-encoding", "content-length", "transfer-encoding", "connection"].includes(name)) out[name] = value;
      });
      res.writeHead(answer.status, out);
      // Streams (a subscriptions/listen) pass as they come.
      if (answer.body) await pipeline(Readable.fromWeb(answer.body as never), res);
      else res.end();
    } catch (error) {
      if (!res.headersSent) res.writeHead(502);
      res.end(res.writableEnded ? undefined : String(error));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, close: () => server.close() };
}

/**
 * Runs the suite once with Node 22; `onAuthorizationUrl` does the person's part at the URL it prints
 * (the redirect is then delivered to the suite's callback listener). The outcome is the suite's exit
 * status (its baseline judged); the lines are one per scenario, from the checks it saved.
 */
async function runSuite(mode: string, label: string, args: string[], onAuthorizationUrl?: (url: string) => Promise<URL>): Promise<Outcome> {
  const outDir = await mkdtemp(join(tmpdir(), "conformance-"));
  try {
    const code = await new Promise<number | null>((resolve) => {
      const child = spawn("npx", ["-y", NODE_22, SUITE, ...args, "-o", outDir], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      let output = "";
      let handled = false;
      const onData = (data: Buffer) => {
        output += data.toString();
        if (process.env.CONFORMANCE_VERBOSE === "1") process.stderr.write(data);
        const url = /^(https?:\/\/\S+\/oauth\/authorize\?\S+)$/m.exec(output)?.[1];
        if (url && onAuthorizationUrl && !handled) {
          handled = true;
          onAuthorizationUrl(url)
            .then((redirect) => fetch(redirect))
            .catch((error) => console.error(`the owner's part failed: ${error}`));
        }
      };
      child.stdout.on("data", onData);
      child.stderr.on("data", onData);
      child.on("close", resolve);
    });
    return { mode, label, passed: code === 0, scenarios: await savedScenarios(outDir) };
  } finally {
    await rm(outDir, { recursive: true, force: true });
  }
}

interface Check {
  id: string;
  status: string;
  description?: string;
  errorMessage?: string;
}

/**
 * Each scenario's line (pass; n/a: every failure is one the baseline names; fail), with each failed
 * or warned check and the suite's reason.
 */
async function savedScenarios(dir: string): Promise<string[]> {
  const expected = new Set([...(await readFile(BASELINE, "utf8")).matchAll(/^\s*-\s*(\S+)/gm)].map((m) => m[1]));
  const lines: string[] = [];
  for (const entry of (await readdir(dir, { withFileTypes: true }))
    .filter((e) => e.isDirectory())
    .sort((a, b) => a.name.localeCompare(b.name))) {
    const file = join(dir, entry.name, "checks.json");
    const checks = JSON.parse(await readFile(file, "utf8").catch(() => "[]")) as Check[];
    const scenario = entry.name.replace(/^(authorization-server|server|authorization)-/, "").replace(/-\d{4}-\d{2}-\d{2}T.*$/, "");
    const count = (status: string) => checks.filter((c) => c.status === status).length;
    const failed = checks.filter((c) => c.status === "FAILURE" || c.status === "WARNING");
    const excused = failed.every((c) => expected.has(scenario) || expected.has(`${scenario}:${c.id}`));
    lines.push(
      `  ${failed.length === 0 ? "pass" : excused ? "n/a " : "fail"}  ${scenario}: ${count("SUCCESS")} passed, ${count("FAILURE")} failed, ${count("WARNING")} warnings`,
    );
    for (const check of failed)
      lines.push(
        `          ${check.status.toLowerCase()} ${check.id}: ${(check.errorMessage ?? check.description ?? "").split("\n")[0].slice(0, 200)}`,
      );
  }
  return lines;
}

await main();
