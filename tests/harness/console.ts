/**
 * The merchant's console over HTTP (functions/console): a browser (the person's page's cookie jar,
 * ./me.ts) that posts HTML forms, an owner's sign-in by presence on the hosted screen, and what a
 * page shows (its CSRF token, a value shown once).
 */
import { expect } from "vitest";
import type { CallOptions, CallResult } from "./http";
import { Browser, proveOnScreen } from "./me";

type Person = Parameters<typeof proveOnScreen>[1];

/** A browser on the console: forms are posted `application/x-www-form-urlencoded`, with the page's CSRF token. */
export class ConsoleBrowser extends Browser {
  protected override readonly mount = "console";

  /** Posts a form (its fields; a list repeats a field), with the CSRF token of the last page unless `csrf` says otherwise. */
  form(
    route: string,
    fields: Record<string, string | string[]> = {},
    options: Omit<CallOptions, "from" | "body"> & { csrf?: string | null } = {},
  ) {
    const body = new URLSearchParams();
    const token = options.csrf === undefined ? this.csrf : options.csrf;
    if (token !== null) body.append("csrf_token", token);
    for (const [name, value] of Object.entries(fields)) for (const one of [value].flat()) body.append(name, one);
    return this.call(route, {
      ...options,
      method: "POST",
      rawBody: body.toString(),
      headers: { "content-type": "application/x-www-form-urlencoded", ...options.headers },
    });
  }

  /** A page, remembering its CSRF token. */
  async page(route: string, options: Omit<CallOptions, "from"> = {}): Promise<CallResult> {
    const result = await this.call(route, options);
    const token = /<meta name="csrf-token" content="([^"]+)">/.exec(result.text)?.[1];
    if (token) this.csrf = token;
    return result;
  }
}

/** What the check's page names: the sign-in's id and the hosted screen's URL. */
export function checkOf(result: CallResult): { sessionId: string; url: string } {
  const sessionId = /name="session_id" value="([^"]+)"/.exec(result.text)?.[1] ?? "";
  const url = (/id="open-check" href="([^"]+)"/.exec(result.text)?.[1] ?? "").replace(/&#38;/g, "&").replace(/&#35;/g, "#");
  return { sessionId, url };
}

/** A value the page shows once (a key, a secret, an invitation's link), by the element's id. */
export function shownOnce(result: CallResult, id: string): string {
  return /<p class="secret" id="[^"]+">([^<]+)<\/p>/.exec(result.text.slice(result.text.indexOf(`id="${id}"`) - 30))?.[1] ?? "";
}

/** Signs `owner` in to `merchantId`'s console from `browser` (test environment): the overview's answer. */
export async function signIn(browser: ConsoleBrowser, merchantId: string, owner: Person, now?: Date, environment = "test") {
  const started = await browser.form("/sign-in", { merchant_id: merchantId, environment }, { now, csrf: null });
  expect(started.status, started.text).toBe(200);
  const check = checkOf(started);
  const done = await proveOnScreen(check.url, owner, now);
  expect(done.body, done.text).toMatchObject({ state: "completed", outcome: { approved: true } });
  const finished = await browser.form("/sign-in/finish", { session_id: check.sessionId }, { now, csrf: null });
  expect(finished.status, finished.text).toBe(303);
  const overview = await browser.page("/", { now });
  expect(overview.text).toContain('data-environment="test"');
  return overview;
}
