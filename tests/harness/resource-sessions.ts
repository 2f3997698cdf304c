import * as v from "valibot";
import { expect } from "vitest";
import { modeSessionSchema } from "../../shared/sessions/mode-session";
import { type ResourceCallOptions, v1 } from "./resource-api";
import { boot } from "./sessions";

/** A body of `POST /v1/sessions` for `mode`, returning to an https page of the merchant. */
export function sessionBody(mode: string, extra: Record<string, unknown> = {}) {
  return { mode, return_url: "https://shop.example/return?order=42", ...extra };
}

/** A session answer in the shape the OpenAPI document declares (fails the test otherwise). */
export function asSession(body: unknown) {
  const parsed = v.safeParse(modeSessionSchema, body);
  expect(parsed.issues?.map((issue) => `${v.getDotPath(issue)}: ${issue.message}`) ?? []).toEqual([]);
  return body as { id: string; url: string; [field: string]: any };
}

/** Creates a /v1 session and answers its 201 body (fails the test otherwise). */
export async function createdSession(key: string, body: Record<string, unknown>, options: ResourceCallOptions = {}) {
  const res = await v1("/sessions", { ...options, key, body });
  expect(res.status, res.text).toBe(201);
  return asSession(res.body);
}

/** The session token the url carries in its fragment. */
export function tokenOf(url: string): string {
  return new URL(url).hash.slice(1);
}

/** Boots the screen the way the page does: with the token from the url's fragment. */
export async function bootedSession(url: string, options: { now?: Date; locale?: string } = {}) {
  const res = await boot(tokenOf(url), options);
  expect(res.status, res.text).toBe(200);
  return res.body as { screen_token: string; capture_nonce: string; [field: string]: any };
}
