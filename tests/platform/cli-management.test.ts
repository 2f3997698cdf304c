/**
 * The merchant commands as clients of the management API (docs/management.md; README, "The CLI"):
 * with the merchant's own key and the service's URL, and no database, `key`, `webhook`, `usage`,
 * `theme` and `merchant owner` act on the key's account over HTTP.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { defaultTheme } from "../../shared/themes/theme";
import { merchantFactory } from "../harness/factories";
import { serviceUnderTest } from "../harness/service";
import { type Ran, cli as runCli } from "../harness/spawn";

/** The CLI with the service's URL and no database at all. */
const cli = (...args: string[]) => runCli(args, { SERVICE_URL: serviceUnderTest().baseUrl, DATABASE_URL: undefined });

const FONT_FILE = fileURLToPath(new URL("../fixtures/fonts/source-code-pro-500.woff2", import.meta.url));

function json(ran: Ran): any {
  expect(ran.code, ran.stderr).toBe(0);
  return JSON.parse(ran.stdout);
}

describe("the merchant commands over the management API", () => {
  it("key list, create, roll and revoke; webhook add, list, update, test, deliveries, threshold; usage: with a key, no database", async () => {
    const merchant = await merchantFactory();
    const key = merchant.keys.sk_test;
    const keys = json(await cli("key", "list", "--api-key", key, "--json"));
    expect(keys.data).toHaveLength(2);
    const created = json(await cli("key", "create", "--api-key", key, "--scopes", "management.read", "--name", "Dashboard", "--json"));
    expect(created).toMatchObject({ scopes: ["management.read"], name: "Dashboard", secret: expect.stringMatching(/^sk_test_/) });
    const rolled = json(await cli("key", "roll", "--api-key", key, "--key-id", created.id, "--overlap-seconds", "60", "--json"));
    expect(rolled.rolled).toMatchObject({ id: created.id, status: "expiring" });
    expect(json(await cli("key", "revoke", "--api-key", key, "--key-id", rolled.id, "--json")).status).toBe("revoked");

    const endpoint = json(await cli("webhook", "add", "--api-key", key, "--url", "https://example.com/hooks", "--json"));
    expect(endpoint.secret).toMatch(/^whsec_/);
    expect(json(await cli("webhook", "list", "--api-key", key, "--json")).data.map((e: { id: string }) => e.id)).toEqual([endpoint.id]);
    const updated = json(
      await cli("webhook", "update", "--api-key", key, "--endpoint", endpoint.id, "--events", "mandate.revoked", "--json"),
    );
    expect(updated.event_types).toEqual(["mandate.revoked"]);
    const test = json(await cli("webhook", "test", "--api-key", key, "--endpoint", endpoint.id, "--json"));
    const log = json(await cli("webhook", "deliveries", "--api-key", key, "--endpoint", endpoint.id, "--json"));
    expect(log.data.map((d: { id: string }) => d.id)).toEqual([test.delivery_id]);
    expect(
      json(await cli("webhook", "rotate", "--api-key", key, "--endpoint", endpoint.id, "--overlap-hours", "1", "--json")).secret,
    ).toMatch(/^whsec_/);
    expect(json(await cli("webhook", "threshold", "--api-key", key, "--percent", "7", "--json")).at_limit_threshold_percent).toBe(7);
    expect(json(await cli("usage", "--api-key", key, "--json"))).toMatchObject({ object: "usage", environment: "test", claims_billed: 0 });

    // the service's refusals are the command's error (exit 1), naming the code
    const unknown = await cli("key", "revoke", "--api-key", key, "--key-id", `key_${"0".repeat(32)}`, "--json");
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/404 not_found/);
    const readOnly = await cli("webhook", "add", "--api-key", created.secret, "--url", "https://example.com/x", "--json");
    expect(readOnly.code).toBe(1);
    // themes: a logo and a font uploaded, a draft from a file, validated, previewed, published, shown
    const dir = await mkdtemp(join(tmpdir(), "cli-themes-"));
    const logoFile = join(dir, "logo.svg");
    await writeFile(
      logoFile,
      '<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><rect width="8" height="8" fill="#7c3aed"/></svg>',
    );
    const logo = json(await cli("theme", "upload", "--api-key", key, "--file", logoFile, "--json"));
    expect(logo).toMatchObject({ kind: "logo", content_type: "image/svg+xml" });
    const font = json(await cli("theme", "upload", "--api-key", key, "--file", FONT_FILE, "--family", "Cli Mono", "--json"));
    expect(font).toMatchObject({ kind: "font", content_type: "font/woff2", family: "Cli Mono" });
    expect(json(await cli("theme", "assets", "--api-key", key, "--json")).data).toHaveLength(2);
    const themeFile = join(dir, "capture.json");
    const tokens = {
      ...defaultTheme("capture", "https://x.example"),
      brand_name: "Cli Brand",
      logo_square_url: logo.id,
      font_body_url: font.id,
    };
    await writeFile(themeFile, JSON.stringify(tokens));
    expect(json(await cli("theme", "validate", "--api-key", key, "--surface", "capture", "--file", themeFile, "--json")).valid).toBe(true);
    expect(json(await cli("theme", "set", "--api-key", key, "--surface", "capture", "--file", themeFile, "--json")).draft.valid).toBe(true);
    const preview = json(await cli("theme", "preview", "--api-key", key, "--surface", "capture", "--json"));
    expect(preview.theme).toMatchObject({ brand_name: "Cli Brand", logo_square_url: logo.url, font_body_url: font.stylesheet_url });
    expect(json(await cli("theme", "publish", "--api-key", key, "--surface", "capture", "--json")).published.theme.brand_name).toBe(
      "Cli Brand",
    );
    expect(json(await cli("theme", "show", "--api-key", key, "--surface", "capture", "--json")).published.version).toBe(1);
    const refused = await cli("theme", "set", "--api-key", key, "--surface", "mandate", "--file", themeFile, "--json");
    expect([refused.code, refused.stderr]).toEqual([1, expect.stringContaining("422 theme_invalid")]);
    expect((await cli("theme", "preview", "--surface", "capture", "--json")).code).toBe(2);
    await rm(dir, { recursive: true, force: true });

    // owners: listed, a person invited (accepted by proving presence), the last owner never removed
    const owners = json(await cli("merchant", "owner", "list", "--api-key", key, "--json"));
    expect(owners).toMatchObject({ object: "list", invitations: [] });
    const removed = await cli("merchant", "owner", "remove", "--api-key", key, "--subject-ref", "sub_nobody", "--json");
    expect([removed.code, removed.stderr]).toEqual([1, expect.stringContaining("404 not_found")]);

    // a command only the API serves needs a key; a malformed key is a usage error
    expect((await cli("key", "list", "--json")).code).toBe(2);
    expect((await cli("key", "list", "--api-key", "pk_test_nope", "--json")).code).toBe(2);
  });
});
