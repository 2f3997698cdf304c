import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { rpc } from "../../shared/kernel/db/rpc";
import { defaultTheme, mandateTokens } from "../../shared/themes/theme";
import { merchantFactory, testDb } from "../harness/factories";
import { call } from "../harness/http";
import { type Ran, cli as runCli } from "../harness/spawn";

/** The CLI against the database the service under test uses. */
function cli(...args: string[]): Promise<Ran> {
  return runCli(args, { DATABASE_URL: inject("databaseUrl") });
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cli-theme-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function themeFile(name: string, content: unknown): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

function customCapture(): Record<string, string | number> {
  return {
    ...defaultTheme("capture", "https://cdn.acme.test/theme"),
    brand_name: "Cli Brand",
    mode: "dark",
    color_primary: "340 82% 52%",
    radius_lg_px: 64,
    font_body_weight: 300,
    logo_wide_url: "https://cdn.acme.test/wide.svg",
  };
}

function served(merchantId: string, key: string, surface = "capture") {
  return call("merchant-theme-get", { key, query: { merchant_id: merchantId, surface } });
}

describe("cli theme", () => {
  it("sets a draft that is not served, then publishes it and it is served", async () => {
    const m = await merchantFactory();
    const file = await themeFile("good-capture.json", customCapture());

    const set = await cli("theme", "set", "--merchant", m.merchant_id, "--surface", "capture", "--file", file, "--json");
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({
      merchant_id: m.merchant_id,
      surface: "capture",
      stage: "draft",
      version: 1,
      theme: customCapture(),
    });
    expect((await served(m.merchant_id, m.keys.pk_test)).body.customized).toBe(false);

    const published = await cli("theme", "publish", "--merchant", m.merchant_id, "--surface", "capture", "--json");
    expect(published.code, published.stderr).toBe(0);
    expect(JSON.parse(published.stdout)).toMatchObject({ stage: "published", version: 1 });
    const res = await served(m.merchant_id, m.keys.pk_test);
    expect(res.body.customized).toBe(true);
    expect(res.body.theme).toEqual(customCapture());

    const show = await cli("theme", "show", "--merchant", m.merchant_id, "--surface", "capture", "--json");
    expect(show.code, show.stderr).toBe(0);
    expect(JSON.parse(show.stdout)).toMatchObject({ served: { customized: true, theme: customCapture() } });
  });

  it("writes a 19-token mandate theme", async () => {
    const m = await merchantFactory();
    const theme = Object.fromEntries(mandateTokens.map((t) => [t, customCapture()[t]]));
    const file = await themeFile("good-mandate.json", theme);
    expect((await cli("theme", "set", "--merchant", m.merchant_id, "--surface", "mandate", "--file", file, "--json")).code).toBe(0);
    expect((await cli("theme", "publish", "--merchant", m.merchant_id, "--surface", "mandate", "--json")).code).toBe(0);
    const res = await served(m.merchant_id, m.keys.pk_test, "mandate");
    expect(res.body).toMatchObject({ customized: true, theme });
    expect((await served(m.merchant_id, m.keys.pk_test, "capture")).body.customized).toBe(false);
  });

  it.concurrent.each([
    ["bad-triple", { color_primary: "#ff0000" }, "color_primary"],
    ["radius-65", { radius_sm_px: 65 }, "radius_sm_px"],
    ["weight-950", { font_heading_weight: 950 }, "font_heading_weight"],
    ["non-url", { logo_square_url: "not a url" }, "logo_square_url"],
    ["http-url", { font_body_url: "http://fonts.acme.test/a.css" }, "font_body_url"],
    ["bad-mode", { mode: "dim" }, "mode"],
  ])("refuses the file %s with a non-zero exit naming the token, and writes nothing", async (name, change, token) => {
    const m = await merchantFactory();
    const file = await themeFile(`${name}.json`, { ...customCapture(), ...change });
    const res = await cli("theme", "set", "--merchant", m.merchant_id, "--surface", "capture", "--file", file, "--json");
    expect(res.code).not.toBe(0);
    expect(res.stdout).toBe("");
    expect(res.stderr).toContain(`${token}:`);
    const rows = await testDb()`select count(*)::int as n from private.themes where merchant_id = ${m.merchant_id}`;
    expect(rows[0].n).toBe(0);
  });

  it("refuses to publish a partial draft written through the API, and serves nothing new", async () => {
    const m = await merchantFactory();
    await rpc(testDb(), "theme_set", { merchant_id: m.merchant_id, surface: "capture", theme: { brand_name: "Half Done" } });
    const published = await cli("theme", "publish", "--merchant", m.merchant_id, "--surface", "capture", "--json");
    expect(published.code).not.toBe(0);
    expect(published.stderr).toMatch(/cannot be published/);
    const res = await served(m.merchant_id, m.keys.pk_test);
    expect(res.body).toMatchObject({ customized: false });
  });

  it("refuses a file with a missing token, an extra token, or no JSON at all", async () => {
    const m = await merchantFactory();
    const { color_border, ...incomplete } = customCapture();
    const cases = [
      [await themeFile("missing.json", incomplete), /color_border: missing/],
      [await themeFile("capture-only.json", customCapture()), /logo_icon_url: not a mandate token/],
      [await themeFile("not-json.json", "{ brand_name: nope"), /cannot read .* as JSON/],
      [join(dir, "does-not-exist.json"), /cannot read/],
    ] as const;
    const results = await Promise.all(
      cases.map(([file], i) =>
        cli("theme", "set", "--merchant", m.merchant_id, "--surface", i === 1 ? "mandate" : "capture", "--file", file, "--json"),
      ),
    );
    results.forEach((res, i) => {
      expect(res.code).not.toBe(0);
      expect(res.stderr).toMatch(cases[i][1]);
    });
  });

  it("answers bad arguments, an unknown merchant and a missing draft with clear errors", async () => {
    const file = await themeFile("args.json", customCapture());
    const m = await merchantFactory();
    const [noMerchant, badSurface, unknown, noDraft] = await Promise.all([
      cli("theme", "set", "--surface", "capture", "--file", file, "--json"),
      cli("theme", "set", "--merchant", m.merchant_id, "--surface", "agent", "--file", file, "--json"),
      cli("theme", "set", "--merchant", "00000000-0000-4000-8000-000000000000", "--surface", "capture", "--file", file, "--json"),
      cli("theme", "publish", "--merchant", m.merchant_id, "--surface", "mandate", "--json"),
    ]);
    expect(noMerchant.code).toBe(2);
    expect(noMerchant.stderr).toMatch(/--merchant/);
    expect(badSurface.code).toBe(2);
    expect(badSurface.stderr).toMatch(/--surface must be one of capture, mandate/);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/unknown merchant/);
    expect(noDraft.code).not.toBe(0);
    expect(noDraft.stderr).toMatch(/no draft theme to publish/);
  });
});
