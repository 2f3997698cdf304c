import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, inject, it } from "vitest";
import { freePort } from "../../scripts/local/ports";
import { createFunctionApp } from "../../shared/edge/app";
import { apiKeyAuth } from "../../shared/edge/auth";
import { trustAnchorOf } from "../../shared/identity/trust-list";
import { parseApiKey } from "../../shared/kernel/api-keys";
import { rpc } from "../../shared/kernel/db/rpc";
import { sha256Hex } from "../../shared/lib/crypto";
import { bytesOf, createMasterList, createTestCsca, type TestCsca } from "../../shared/simulator/passports";
import { merchantFactory, testDb } from "../harness/factories";
import { errorOf } from "../harness/http";
import { enrollStranger, transact } from "../harness/identity";
import { cliProcess, type Ran, cli as runCli } from "../harness/spawn";

const cli = (...args: string[]) => runCli(args, { DATABASE_URL: inject("databaseUrl") });

/** Exactly one JSON document on stdout. */
function json(ran: Ran): any {
  expect(ran.code, ran.stderr).toBe(0);
  return JSON.parse(ran.stdout);
}

/** A usage or lookup failure: a message on stderr, nothing on stdout, a non-zero exit. */
function expectFailure(ran: Ran, message: string | RegExp) {
  expect(ran.code).not.toBe(0);
  expect(ran.code).not.toBeNull();
  expect(ran.stdout).toBe("");
  expect(ran.stderr).toMatch(
    typeof message === "string" ? new RegExp(`error: .*${message.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`) : message,
  );
}

// A probe behind the real key middleware, as a function using the keys would be.
const probe = createFunctionApp("cli-probe");
probe.get("/", apiKeyAuth("publishable"), (c) => c.json(c.var.principal));
const bindings = { DATABASE_URL: inject("databaseUrl") };
async function authenticate(key: string) {
  const res = await probe.request("/functions/v1/cli-probe", { headers: { "x-service-api-key": key } }, bindings);
  return { status: res.status, body: (await res.json()) as any };
}

const KEY_NAMES = ["pk_test", "sk_test", "pk_live", "sk_live"] as const;

describe("cli", () => {
  describe("as a process (npm run cli runs scripts/cli.ts; every other test calls its run in-process)", () => {
    it("prints one JSON document on stdout and exits 0", { timeout: 60_000 }, async () => {
      const ran = await cliProcess(["merchant", "create", "--name", "CLI process", "--json"], { DATABASE_URL: inject("databaseUrl") });
      expect(ran.stderr).toBe("");
      expect(Object.keys(json(ran)).sort()).toEqual(["keys", "merchant_id"]);
    });

    it("exits 2 on a usage error and 1 on a failure, with the message on stderr and nothing on stdout", { timeout: 60_000 }, async () => {
      const env = { DATABASE_URL: inject("databaseUrl") };
      const [usageError, failure] = await Promise.all([
        cliProcess(["frobnicate", "create"], env),
        cliProcess(["key", "revoke", "--key-id", "00000000-0000-4000-8000-000000000000", "--json"], env),
      ]);
      expect(usageError).toMatchObject({ code: 2, stdout: "" });
      expect(usageError.stderr).toMatch(/^error: unknown command group frobnicate/);
      expect(failure).toMatchObject({ code: 1, stdout: "", stderr: "error: unknown key\n" });
    });
  });

  describe("merchant create", () => {
    it("prints one JSON document with the merchant id and four keys of the right form", async () => {
      const ran = await cli("merchant", "create", "--name", "CLI merchant", "--json");
      const out = json(ran);
      expect(Object.keys(out).sort()).toEqual(["keys", "merchant_id"]);
      expect(out.merchant_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(Object.keys(out.keys).sort()).toEqual([...KEY_NAMES].sort());
      for (const name of KEY_NAMES) expect(out.keys[name]).toMatch(new RegExp(`^${name}_[0-9A-Za-z]{32,}$`));
      expect(new Set(Object.values(out.keys)).size).toBe(4);
    });

    it("creates keys that authenticate as that merchant, and stores only their hashes", async () => {
      const out = json(await cli("merchant", "create", "--name", "CLI keys", "--json"));
      for (const name of KEY_NAMES) {
        const key = out.keys[name];
        const parsed = parseApiKey(key)!;
        const row = await rpc(testDb(), "request_authenticate", {
          credential: { key_hash: await sha256Hex(key), kind: parsed.kind, environment: parsed.environment },
          now: new Date().toISOString(),
        });
        expect(row).toMatchObject({ merchant_id: out.merchant_id, environment: parsed.environment });
        const res = await authenticate(key);
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({ merchantId: out.merchant_id, keyKind: parsed.kind, environment: parsed.environment });
      }
      const stored = await testDb()`select key_hash, key_hint from private.api_keys where merchant_id = ${out.merchant_id}`;
      const hashes = await Promise.all(KEY_NAMES.map((name) => sha256Hex(out.keys[name])));
      expect(stored.map((row) => row.key_hash).sort()).toEqual(hashes.sort());
      for (const row of stored) expect(Object.values(out.keys)).not.toContain(row.key_hint);
    });
  });

  describe("key create and revoke", () => {
    it("adds a key of the asked kind and environment that authenticates", async () => {
      const merchant = await merchantFactory();
      const out = json(await cli("key", "create", "--merchant", merchant.merchant_id, "--kind", "secret", "--env", "live", "--json"));
      expect(out).toMatchObject({ merchant_id: merchant.merchant_id, kind: "secret", environment: "live" });
      expect(out.key).toMatch(/^sk_live_[0-9A-Za-z]{32,}$/);
      expect((await authenticate(out.key)).body).toMatchObject({ merchantId: merchant.merchant_id, keyId: out.key_id });
    });

    it("revokes a key by its value: it stops authenticating, the others do not", async () => {
      const merchant = await merchantFactory();
      expect((await authenticate(merchant.keys.sk_test)).status).toBe(200);
      const out = json(await cli("key", "revoke", "--key", merchant.keys.sk_test, "--json"));
      expect(out).toMatchObject({ already_revoked: false, revoked_at: expect.any(String) });
      expect(await authenticate(merchant.keys.sk_test)).toEqual({
        status: 401,
        body: { error: expect.any(String), code: "INVALID_API_KEY" },
      });
      expect((await authenticate(merchant.keys.pk_test)).status).toBe(200);
      const again = json(await cli("key", "revoke", "--key", merchant.keys.sk_test, "--json"));
      expect(again).toMatchObject({ key_id: out.key_id, already_revoked: true });
    });

    it("revokes a key by its id", async () => {
      const merchant = await merchantFactory();
      const created = json(
        await cli("key", "create", "--merchant", merchant.merchant_id, "--kind", "publishable", "--env", "test", "--json"),
      );
      expect((await authenticate(created.key)).status).toBe(200);
      json(await cli("key", "revoke", "--key-id", created.key_id, "--json"));
      expect((await authenticate(created.key)).body.code).toBe("INVALID_API_KEY");
    });
  });

  describe.concurrent("bad arguments", () => {
    const uuid = "00000000-0000-4000-8000-000000000000";
    it.each([
      ["no arguments", [], "unknown command group (none)"],
      ["an unknown group", ["frobnicate", "create"], "unknown command group frobnicate"],
      ["an unknown command", ["merchant", "frobnicate"], 'unknown command "merchant frobnicate"'],
      ["a missing --name", ["merchant", "create", "--json"], "--name <value> is required"],
      ["an empty --name", ["merchant", "create", "--name", " ", "--json"], "--name <value> is required"],
      ["a stray positional", ["merchant", "create", "Acme", "--json"], 'unexpected argument "Acme"'],
      [
        "a bad --env",
        ["key", "create", "--merchant", uuid, "--kind", "secret", "--env", "staging", "--json"],
        "--env must be one of test, live",
      ],
      [
        "a bad --kind",
        ["key", "create", "--merchant", uuid, "--kind", "admin", "--env", "test", "--json"],
        "--kind must be one of publishable, secret",
      ],
      [
        "a malformed --merchant",
        ["key", "create", "--merchant", "acme", "--kind", "secret", "--env", "test", "--json"],
        "--merchant must be a merchant id",
      ],
      ["a malformed --key", ["key", "revoke", "--key", "sk_test_short", "--json"], "--key is not a well-formed API key"],
      ["revoke without a key", ["key", "revoke", "--json"], "--key-id <value> is required"],
    ])("refuses %s: message on stderr, nothing on stdout, non-zero exit", async (_, args, message) => {
      expectFailure(await cli(...args), message);
    });

    it("refuses an unknown merchant or key with a clear message", async () => {
      expectFailure(await cli("key", "create", "--merchant", uuid, "--kind", "secret", "--env", "test", "--json"), "unknown merchant");
      expectFailure(await cli("key", "revoke", "--key-id", uuid, "--json"), "unknown key");
    });
  });

  describe("document", () => {
    it("makes a sandbox CSCA on the sandbox trust list, and passports of it that the sink answers as each case says", async () => {
      const dir = await mkdtemp(join(tmpdir(), "cli-document-"));
      const csca = json(await cli("document", "csca", "create", "--json"));
      expect(csca).toMatchObject({ country: "UTO", environment: "test", fingerprint: expect.stringMatching(/^[0-9a-f]{64}$/) });
      const [listed] = await testDb()`select source from private.document_trust_anchors
        where environment = 'test' and fingerprint = ${csca.fingerprint}`;
      expect(listed).toEqual({ source: "sandbox" });
      const file = join(dir, "csca.json");
      await writeFile(file, JSON.stringify(csca));

      const merchant = await merchantFactory();
      const person = await enrollStranger(merchant.keys.pk_test);
      const cases = ["valid", "tampered", "wrong-signer", "expired", "unknown-csca"];
      for (const kind of cases) {
        const made = json(await cli("document", "passport", "create", "--csca", file, "--case", kind, "--json"));
        expect(made.case).toBe(kind);
        const shot = person.capture();
        const res = await transact(merchant.keys.sk_test, {
          action: "ACTION_SIGN",
          service_hash: `svc:${crypto.randomUUID()}`,
          user_id: person.subject_ref,
          capture_nonce: shot.nonce,
          face_template: shot.descriptor,
          document: made.document,
        });
        if (made.expected === null) expect(res.status, `${kind}: ${res.text}`).toBe(200);
        // every document failure is 403 DOCUMENT_REQUIRED, the case's cause in reason (D-427)
        else
          expect({ ...errorOf(res), reason: res.body.reason }, kind).toEqual({
            status: 403,
            code: "DOCUMENT_REQUIRED",
            reason: made.expected,
          });
      }
      expectFailure(
        await cli("document", "passport", "create", "--csca", file, "--case", "forged"),
        "--case must be one of valid, tampered",
      );
      expectFailure(
        await cli("document", "passport", "create", "--csca", join(dir, "none.json")),
        "is not what `document csca create` printed",
      );
    }, 180_000);

    it("imports a master list's CSCAs into a trust list, shows and removes them; a list whose signature fails adds nothing", async () => {
      const dir = await mkdtemp(join(tmpdir(), "cli-master-list-"));
      const cscas: TestCsca[] = [await createTestCsca("UTO"), await createTestCsca("UTO")];
      const list = await createMasterList(cscas, cscas[0]);
      const file = join(dir, "list.ml");
      await writeFile(file, list);
      const imported = json(await cli("document", "trust-list", "import", "--env", "live", "--file", file, "--json"));
      expect(imported).toMatchObject({ environment: "live", certificates: 2, added: 2, already_listed: 0 });
      expect(imported.master_list_signer).toMatch(/Master List Signer/);
      expect(json(await cli("document", "trust-list", "import", "--env", "live", "--file", file))).toMatchObject({
        added: 0,
        already_listed: 2,
      });

      const fingerprints = await Promise.all(cscas.map(async (c) => (await trustAnchorOf(bytesOf(c.certificate))).fingerprint));
      const shown = () => cli("document", "trust-list", "show", "--env", "live").then(json);
      const ours = (anchors: { fingerprint: string; source: string }[]) => anchors.filter((a) => fingerprints.includes(a.fingerprint));
      expect(ours((await shown()).anchors).map((a) => a.source)).toEqual(["master_list", "master_list"]);
      expect(json(await cli("document", "trust-list", "remove", "--env", "live", "--fingerprint", fingerprints[1]))).toMatchObject({
        removed: 1,
      });
      expect(ours((await shown()).anchors).map((a) => a.fingerprint)).toEqual([fingerprints[0]]);
      expectFailure(await cli("document", "trust-list", "remove", "--env", "live", "--fingerprint", fingerprints[1]), "no CSCA");

      const broken = list.slice();
      broken[broken.length - 5] ^= 0xff;
      await writeFile(file, broken);
      expectFailure(await cli("document", "trust-list", "import", "--env", "live", "--file", file), /error: .*list\.ml: /);
      expect(ours((await shown()).anchors)).toHaveLength(1);
    }, 180_000);
  });

  describe("an unreachable database", () => {
    it("names the host and port it tried from DATABASE_URL, never the password, and how to point it elsewhere", async () => {
      const port = await freePort();
      const ran = await runCli(["merchant", "create", "--name", "Nowhere", "--json"], {
        DATABASE_URL: `postgres://postgres:s3cret-pw@127.0.0.1:${port}/hauth`,
      });
      expectFailure(ran, `cannot reach the database at 127.0.0.1:${port}, from DATABASE_URL`);
      expect(ran.stderr).toContain("set DATABASE_URL");
      expect(ran.stderr).not.toContain("s3cret-pw");
    });

    // An empty DATABASE_URL is unset too: never postgres.js's defaults (the machine's local database).
    it.each([
      ["unset", undefined],
      ["empty", ""],
    ])("with DATABASE_URL %s, names the embedded database's port and PGPORT_EMBEDDED", async (_, databaseUrl) => {
      const port = await freePort();
      const ran = await runCli(["merchant", "create", "--name", "Nowhere", "--json"], {
        DATABASE_URL: databaseUrl,
        PGPORT_EMBEDDED: String(port),
      });
      expectFailure(ran, `cannot reach the database at 127.0.0.1:${port}: with DATABASE_URL unset`);
      expect(ran.stderr).toMatch(/embedded database of a running `npm start`/);
      expect(ran.stderr).toMatch(/set PGPORT_EMBEDDED .*or set DATABASE_URL/);
    });
  });
});
