/**
 * The local server's front (scripts/local/client-address.ts), between a client and workerd: every
 * request reaches the Worker with its body whole, however the client sends it, and every answer the
 * Worker gives reaches the client, including one given before the body was read.
 */
import { request } from "node:http";
import { describe, expect, it } from "vitest";
import { serviceUnderTest } from "../harness/service";

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** One request on a connection of its own; `chunks` are written one by one, `pauseMs` apart, without a declared length. */
function send(method: string, path: string, body: { whole: string } | { chunks: string[]; pauseMs: number }): Promise<Answer> {
  const url = new URL(path, serviceUnderTest().baseUrl);
  const framing = "whole" in body ? { "content-length": String(Buffer.byteLength(body.whole)) } : { "transfer-encoding": "chunked" };
  return new Promise((resolve, reject) => {
    const sent = request(url, { method, headers: { "content-type": "application/json", ...framing } }, (answer) => {
      const parts: Buffer[] = [];
      answer.on("data", (part: Buffer) => parts.push(part));
      answer.on("end", () => resolve({ status: answer.statusCode ?? 0, headers: answer.headers, text: Buffer.concat(parts).toString() }));
      answer.on("error", reject);
    });
    sent.on("error", reject);
    if ("whole" in body) return void sent.end(body.whole);
    (async () => {
      for (const chunk of body.chunks) {
        sent.write(chunk);
        await new Promise((done) => setTimeout(done, body.pauseMs));
      }
      sent.end();
    })();
  });
}

describe("the local server's front", { timeout: 120_000 }, () => {
  it("passes on the Worker's answer to a request whose body it never read: 90 CORS preflights with a 300 KB body, 6 at a time", async () => {
    // Before the front read bodies whole, about one in four of these was a 502 ("the local runtime
    // did not answer"): workerd closed the connection on the body still arriving, and the reset lost
    // the answer.
    const body = JSON.stringify({ scopes: "x".repeat(300_000) });
    const statuses: number[] = [];
    for (let round = 0; round < 15; round++) {
      const answers = await Promise.all(Array.from({ length: 6 }, () => send("OPTIONS", "/functions/v1/mandate-issue", { whole: body })));
      statuses.push(...answers.map((answer) => answer.status));
    }
    expect(statuses.filter((status) => status !== 204)).toEqual([]);
  });

  it("passes on a body sent in chunks, with pauses and no declared length, whole", async () => {
    const padding = " ".repeat(40_000);
    const answer = await send("POST", "/functions/v1/receipt-verify", {
      chunks: [`{${padding}`, `"id"${padding}:`, `${padding}"not-a-receipt-id"`, `${padding}}`],
      pauseMs: 150,
    });
    expect(answer.status, answer.text).toBe(400);
    expect(JSON.parse(answer.text)).toMatchObject({ code: "INVALID_INPUT", fields: ["id"] });
  });

  it("lets the Worker refuse a body over its limit (with its own request id); a body over the front's limit is refused alike", async () => {
    const overService = await send("POST", "/functions/v1/receipt-verify", { whole: JSON.stringify({ code: "x".repeat(300_000) }) });
    expect(overService.status).toBe(413);
    expect(JSON.parse(overService.text)).toMatchObject({ code: "PAYLOAD_TOO_LARGE" });
    expect(overService.headers["x-request-id"]).toBeTruthy();

    const overFront = await send("POST", "/functions/v1/receipt-verify", { whole: JSON.stringify({ code: "x".repeat(17 * 1024 * 1024) }) });
    expect(overFront.status).toBe(413);
    expect(JSON.parse(overFront.text)).toMatchObject({ code: "PAYLOAD_TOO_LARGE", error: expect.any(String) });
  });
});
