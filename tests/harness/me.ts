/**
 * The person's own page over HTTP (functions/me): a browser as a cookie jar and a client address,
 * the sign-in by presence on the hosted screen (boot and complete with simulator captures), and the
 * calls a signed-in page makes.
 */
import { expect } from "vitest";
import { type CallOptions, type CallResult, call, freshIp } from "./http";
import { boot, screenCall } from "./sessions";

type Person = { capture(options: { nonce?: string; light?: boolean; at?: Date }): { descriptor: unknown; nonce: string } };

/** A browser: its cookies (name → value) and its address, and the CSRF token its page holds once signed in. */
export class Browser {
  readonly cookies = new Map<string, string>();
  csrf = "";

  /** A browser at its own address, or at `from` (persons behind one address: a household, an office). */
  constructor(readonly from = freshIp()) {}

  /** The function whose pages this browser calls (the console's harness sets its own). */
  protected readonly mount: string = "me";

  /** A call to /functions/v1/<mount>/<route> with this browser's cookies and address; Set-Cookie read back. */
  async call(route: string, options: Omit<CallOptions, "from"> = {}): Promise<CallResult> {
    const cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
    const headers: Record<string, string> = { ...(cookie ? { cookie } : {}), ...options.headers };
    const result = await call(`${this.mount}${route}`, { ...options, headers, from: this.from });
    for (const line of result.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split("; ");
      const [name, value] = [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)];
      if (attributes.includes("Max-Age=0")) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return result;
  }

  /** A state-changing call, with the CSRF token of the page. */
  post(route: string, body: unknown, options: Omit<CallOptions, "from" | "body"> = {}) {
    return this.call(route, { ...options, body, headers: { "x-csrf-token": this.csrf, ...options.headers } });
  }
}

/** The person on the capture screen: boot with the session token of the URL, complete with their capture. */
export async function proveOnScreen(url: string, person: Person, now?: Date) {
  const booted = await boot(new URL(url).hash.slice(1), { now });
  expect(booted.status, booted.text).toBe(200);
  const { descriptor } = person.capture({ nonce: booted.body.capture_nonce, light: true, at: now });
  return screenCall("complete", booted.body.screen_token, { capture_nonce: booted.body.capture_nonce, face_template: descriptor }, { now });
}

/** Signs `person` in from `browser` through merchant `merchantId`'s link: the finish's answer. */
export async function signIn(browser: Browser, merchantId: string, person: Person, now?: Date) {
  const started = await browser.call("/sign-in", { body: { merchant_id: merchantId, environment: "test" }, now });
  expect(started.status, started.text).toBe(201);
  const done = await proveOnScreen(started.body.url, person, now);
  expect(done.body, done.text).toMatchObject({ state: "completed", outcome: { approved: true } });
  const finished = await browser.call("/sign-in/finish", { body: { session_id: started.body.session_id }, now });
  expect(finished.status, finished.text).toBe(200);
  browser.csrf = finished.body.csrf_token;
  return finished;
}
