/**
 * The handoff on the hosted screen in real browsers: a desktop without a camera (Chromium with no
 * fake devices) opens a session's link and shows the QR code of the phone's link instead of asking
 * for a camera it does not have; a phone (Chromium with the fake camera) opens that link, claims the
 * code and boots the session; the desktop sees the phone take over. Nothing is loaded from another host.
 */

import { encode } from "uqr";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { merchantFactory } from "../harness/factories";
import { useOwnService } from "../harness/own-service";
import { createSession, readSession } from "../harness/sessions";
import { type GuardedBrowser, openBrowser } from "./chromium";
import { PHONE, photograph, waitForView } from "./hosted-screen";

const FUNCTIONS = ["hosted-session-create", "hosted-session-get", "hosted-capture", "handoff-register-public", "merchant-theme-get"];
const DESKTOP = { width: 1024, height: 760 };

const service = useOwnService("hosted_handoff", FUNCTIONS);
let desktop: GuardedBrowser;
let phone: GuardedBrowser;

beforeAll(async () => {
  desktop = await openBrowser(service.own.server.url, { viewport: DESKTOP });
  phone = await openBrowser(service.own.server.url, { media: inject("media").reading, viewport: PHONE });
});

afterAll(async () => {
  await desktop?.close();
  await phone?.close();
});

describe("hosted screen handoff", () => {
  it("a desktop without a camera shows the phone's QR code; the phone opens it and the desktop sees it take over", {
    timeout: 120_000,
  }, async () => {
    const merchant = await merchantFactory("Acme Market");
    const created = await createSession(merchant.keys.sk_test, { action: "login" });
    expect(created.status, created.text).toBe(201);

    const page = desktop.page;
    const registered = page.waitForResponse((response) => response.url().endsWith("/hosted-capture/handoff"));
    await page.goto(created.body.url);
    const handoff = await (await registered).json();
    await waitForView(page, "handoff");
    expect(await page.textContent("[data-view=handoff] h1")).toBe("Continue on your phone");
    // the QR code shown is the phone's link
    const drawn = await page.$eval("#handoff-qr", (img) => ({
      loaded: (img as HTMLImageElement).naturalWidth > 0,
      src: (img as HTMLImageElement).src,
    }));
    expect(drawn.loaded).toBe(true);
    const svg = decodeURIComponent(drawn.src.slice("data:image/svg+xml;charset=utf-8,".length));
    const modules = new Set([...svg.matchAll(/M(\d+),(\d+)h/g)].map(([, x, y]) => `${Number(x) / 6},${Number(y) / 6}`));
    const matrix = encode(handoff.url, { ecc: "M", border: 2 }).data.flatMap((row, y) =>
      row.flatMap((dark, x) => (dark ? [`${x},${y}`] : [])),
    );
    expect(modules).toEqual(new Set(matrix));
    expect(handoff.url).toContain("/functions/v1/hosted-capture/session#handoff=hoc_");
    await photograph(page, "en-handoff-waiting");

    const phonePage = await phone.newPage({ viewport: PHONE });
    await phonePage.goto(handoff.url);
    await waitForView(phonePage, "intro");
    expect(await phonePage.evaluate(() => location.hash)).toBe("");

    await page.waitForFunction(
      () => document.getElementById("handoff-status")?.textContent?.startsWith("Your phone has taken over"),
      null,
      {
        timeout: 15_000,
      },
    );
    expect(await page.isHidden("#handoff-qr")).toBe(true);
    await photograph(page, "en-handoff-claimed");
    const session = await readSession(merchant.keys.sk_test, created.body.session_id);
    expect(session.body.state).toBe("opened");

    // the code is single use: opened again, it shows why it cannot continue
    const again = await phone.newPage({ viewport: PHONE });
    await again.goto(handoff.url);
    await waitForView(again, "error");
    expect(await again.textContent("#error-message")).toContain("already been used or has expired");
  });
});
