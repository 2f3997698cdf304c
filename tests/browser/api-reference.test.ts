/**
 * The reference pages (`GET /v1/reference`, `GET /functions/v1/openapi/reference`) in a real browser: Scalar renders the
 * service's own OpenAPI documents with its operations, under the page's Content-Security-Policy (no
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

it.each([
  { page: "/v1/reference", title: "Human-authorisation service: resource API", operation: "Check an act against a mandate" },
  { page: "/functions/v1/openapi/reference", title: "Human-authorisation service: function API", operation: "/functions/v1/mandate-check" },
])(
  "$page renders its document's operations, nothing refused but inline styles and eval, nothing from another host",
  async ({ page: path, title, operation }) => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.addInitScript(() => {
      const violations: string[] = [];
      (window as unknown as { violations: string[] }).violations = violations;
      document.addEventListener("securitypolicyviolation", (event) => violations.push(`${event.violatedDirective} ${event.blockedURI}`));
    });
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    const response = await page.goto(`${serviceUnderTest().baseUrl}${path}`);
    expect(response?.status()).toBe(200);
    await page.getByText(title).first().waitFor({ timeout: 30_000 });
    await page.getByText(operation).first().waitFor({ timeout: 30_000 });
    await page.screenshot({ path: `dist/screenshots/reference${path.replaceAll("/", "-")}.png` });
    // Scalar also injects its style sheet inline (the same rules as style.css), sets some style
    // attributes and tries `eval` once: the policy refuses all three and the page renders without
    // them. No script file, fetch, image or font is refused.
    const violations: string[] = await page.evaluate(() => (window as unknown as { violations: string[] }).violations);
    expect(violations.filter((violation) => !/^(style-src-(elem|attr) inline|script-src eval)$/.test(violation))).toEqual([]);
    expect(errors).toEqual([]);
  },
);
