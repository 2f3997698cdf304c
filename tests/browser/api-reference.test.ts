/**
 * The resource API's reference page (`GET /v1/reference`) in a real browser: Scalar renders the
 * service's own OpenAPI document with its operations, under the page's Content-Security-Policy (no
 * URL refused; only inline styles and an `eval`), and the page asks no other host for anything (the
 * guard of chromium.ts).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { serviceUnderTest } from "../harness/service";
import { type GuardedBrowser, openBrowser } from "./chromium";

let browser: GuardedBrowser;

beforeAll(async () => {
  browser = await openBrowser(serviceUnderTest().baseUrl, { viewport: { width: 1280, height: 900 } });
});

afterAll(async () => {
  await browser?.close();
});

it("renders the /v1 document's operations with no CSP violation and nothing from another host", async () => {
  const { page } = browser;
  await page.addInitScript(() => {
    const violations: string[] = [];
    (window as unknown as { violations: string[] }).violations = violations;
    document.addEventListener("securitypolicyviolation", (event) => violations.push(`${event.violatedDirective} ${event.blockedURI}`));
  });
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  const response = await page.goto(`${serviceUnderTest().baseUrl}/v1/reference`);
  expect(response?.status()).toBe(200);
  await page.getByText("Human-authorisation service: resource API").first().waitFor({ timeout: 30_000 });
  await page.getByText("/v1/mandates/{id}/check").first().waitFor({ timeout: 30_000 });
  await page.screenshot({ path: "dist/screenshots/api-reference.png" });
  // Scalar also injects its style sheet inline (the same rules as style.css), sets some style
  // attributes and tries `eval` once: the policy refuses all three and the page renders without
  // them. No script file, fetch, image or font is refused.
  const violations: string[] = await page.evaluate(() => (window as unknown as { violations: string[] }).violations);
  expect(violations.filter((violation) => !/^(style-src-(elem|attr) inline|script-src eval)$/.test(violation))).toEqual([]);
  expect(errors).toEqual([]);
});
