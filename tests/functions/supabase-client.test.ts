/**
 * A Supabase user reaches the functions with `supabase.functions.invoke` (issue 29, the card;
 * D-431): the client from @supabase/supabase-js, pointed at the running service as at a Supabase
 * project, calls `/functions/v1/<name>` with the service's own headers set as custom headers.
 */
import { createClient, FunctionsHttpError } from "@supabase/supabase-js";
import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import { merchantFactory } from "../harness/factories";
import { replayHeaders } from "../harness/http";
import { enrollStranger } from "../harness/identity";
import { serviceUnderTest } from "../harness/service";

/**
 * Node 20 has no WebSocket, and supabase-js builds its realtime client eagerly; these tests use no
 * realtime, so its transport is one that refuses to open (Node 22 and later need none).
 */
class NoRealtime {
  constructor() {
    throw new Error("realtime is not used by these tests");
  }
}

describe("supabase.functions.invoke against the running service", () => {
  it("reaches a public function, a publishable one with its key, the sink with the person's session, and reads an error", async () => {
    const merchant = await merchantFactory();
    // The project's anon key is what supabase-js sends by default (Authorization and apikey); the service reads its own headers.
    const supabase = createClient(serviceUnderTest().baseUrl, merchant.keys.pk_test, {
      auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
      realtime: { transport: NoRealtime as never },
    });

    const scopes = await supabase.functions.invoke("mandate-scopes", { method: "GET", headers: { "accept-language": "pt-BR" } });
    expect(scopes.error).toBeNull();
    expect(scopes.data).toMatchObject({ locale: "pt-BR", money_scopes: ["purchase", "payment"] });

    const person = await enrollStranger(merchant.keys.pk_test);
    const shot = person.capture();
    const identified = await supabase.functions.invoke("face-identify", {
      body: { capture_nonce: shot.nonce, face_template: shot.descriptor },
      headers: { "x-service-api-key": merchant.keys.pk_test, ...replayHeaders() },
    });
    expect(identified.error).toBeNull();
    expect(identified.data).toMatchObject({ matched: true, subject_ref: person.subject_ref });

    // The person's first-party session in Authorization (spec 5 rule 3), replacing the anon key's bearer.
    const act = await supabase.functions.invoke("process-biovital-transaction", {
      body: {
        action: "ACTION_LOGIN",
        service_hash: `svc:${crypto.randomUUID()}`,
        user_id: decodeJwt(person.session_token).sub,
        capture_nonce: shot.nonce,
        face_template: shot.descriptor,
      },
      headers: { authorization: `Bearer ${person.session_token}`, ...replayHeaders() },
    });
    expect(act.error).toBeNull();
    expect(act.data).toMatchObject({ success: true, status: "approved", assurance_level: "face_voice" });

    // An error answer is a FunctionsHttpError whose response carries the service's {error, code}.
    const refused = await supabase.functions.invoke("mandate-issue", {
      body: {},
      headers: { "x-service-api-key": merchant.keys.pk_test, ...replayHeaders() },
    });
    expect(refused.error).toBeInstanceOf(FunctionsHttpError);
    const response = (refused.error as FunctionsHttpError).context as Response;
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ code: "AUTH_REQUIRED" });
  });
});
