import { describe, expect, it } from "vitest";
import { call, errorOf } from "../harness/http";

describe("mandate-scopes", () => {
  describe("happy", () => {
    it("serves the closed vocabulary of eight scopes in English by default", async () => {
      const res = await call("mandate-scopes");
      expect(res.status).toBe(200);
      expect(res.headers.get("cache-control")).toMatch(/^public, max-age=\d+$/);
      expect(res.body).toMatchObject({
        version: "1.0.0-beta",
        locale: "en",
        matching: "exact",
        money_scopes: ["purchase", "payment"],
        constraint_required_scopes: ["task"],
      });
      expect(res.body.scopes.map((s: { scope: string }) => s.scope)).toEqual([
        "login",
        "purchase",
        "payment",
        "task",
        "sign",
        "read",
        "message",
        "booking",
      ]);
      for (const entry of res.body.scopes) {
        expect(Object.keys(entry).sort()).toEqual(["accepts_amount_ceiling", "description", "label", "requires_constraints", "scope"]);
        expect(entry.label.length).toBeGreaterThan(0);
        expect(entry.description.length).toBeGreaterThan(0);
      }
      expect(res.body.scopes.find((s: { scope: string }) => s.scope === "task")).toMatchObject({
        requires_constraints: true,
        accepts_amount_ceiling: false,
      });
    });

    it.each([
      ["pt-BR", "pt-BR", "Fazer compras"],
      ["pt", "pt-BR", "Fazer compras"],
      ["es-MX,es;q=0.9", "es", "Hacer compras"],
      ["fr-FR, de;q=0.8", "en", "Make purchases"],
      ["de;q=0.9, es;q=0.5", "es", "Hacer compras"],
    ])("localises only label and description for Accept-Language %s", async (header, locale, purchaseLabel) => {
      const english = await call("mandate-scopes");
      const res = await call("mandate-scopes", { headers: { "accept-language": header } });
      expect(res.body.locale).toBe(locale);
      const purchase = res.body.scopes.find((s: { scope: string }) => s.scope === "purchase");
      expect(purchase.label).toBe(purchaseLabel);
      const strip = (body: any) => body.scopes.map(({ label, description, ...rest }: any) => rest);
      expect(strip(res.body)).toEqual(strip(english.body));
    });

    it("needs no key and ignores one", async () => {
      const res = await call("mandate-scopes", { key: "sk_test_not_a_real_key" });
      expect(res.status).toBe(200);
    });
  });

  describe("errors", () => {
    it.each(["POST", "PUT", "PATCH", "DELETE"])("answers %s with 405 METHOD_NOT_ALLOWED", async (method) => {
      const res = await call("mandate-scopes", { method, body: method === "DELETE" ? undefined : {} });
      expect(errorOf(res)).toEqual({ status: 405, code: "METHOD_NOT_ALLOWED" });
      expect(res.headers.get("allow")).toContain("GET");
    });
  });
});
