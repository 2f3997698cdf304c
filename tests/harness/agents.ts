/**
 * An AI agent as tests drive one: the MCP SDK's client with its OAuth client provider (kept in
 * memory), a merchant with an owner, and the owner's part at the authorization endpoint.
 */
import { auth, Client, type ClientOptions, type OAuthClientProvider, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { expect } from "vitest";
import { addOwner } from "../../shared/merchants/accounts";
import { merchantFactory, testDb } from "./factories";
import { enrollStranger } from "./identity";
import { serviceUnderTest } from "./service";

export const REDIRECT = "http://127.0.0.1:9/callback";

/**
 * The SDK's OAuth client provider, kept in memory; the authorization URL it is sent to is recorded.
 * With `clientMetadataUrl` the client identifies itself by that metadata document (when the server
 * supports them) instead of registering.
 */
export class MemoryProvider implements OAuthClientProvider {
  client: any;
  saved: any;
  verifier = "";
  authorizationUrl: URL | null = null;
  constructor(readonly clientMetadataUrl?: string) {}
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata() {
    return { client_name: "Shopping agent", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" } as any;
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(client: any) {
    this.client = client;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: any) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

export const base = () => serviceUnderTest().baseUrl;
export const mcpUrl = () => `${base()}/functions/v1/mcp`;

/** A merchant with one owner (enrolled with its sandbox key): the person's session token authorises agents. */
export async function ownedMerchant() {
  const merchant = await merchantFactory();
  const owner = await enrollStranger(merchant.keys.pk_test);
  await addOwner(testDb(), merchant.merchant_id, owner.subject_ref, new Date());
  return { merchant, owner };
}

/** The cookies a response sets, as a browser sends them back (`name=value; …`). */
export function cookiesOf(response: Response): string {
  return response.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
}

/** Both scopes an owner can grant. */
export const BOTH_SCOPES = ["mandates:read", "mandates:write"] as const;

/** The owner's part: open the authorization URL signed in, read the consent screen, approve (or deny) with `scopes` ticked. */
export async function consent(
  url: URL,
  sessionToken: string,
  decision: "approve" | "deny" = "approve",
  scopes: readonly string[] = BOTH_SCOPES,
) {
  const page = await fetch(url, { headers: { authorization: `Bearer ${sessionToken}`, "accept-language": "pt-BR" } });
  return decideOn(url, page, decision, scopes);
}

/**
 * On the consent screen `page` (of the authorization request `url`): approve with `scopes` ticked
 * (every scope unless told), or deny, as the form posts it (the session token it carries, the consent cookie).
 */
export async function decideOn(
  url: URL,
  page: Response,
  decision: "approve" | "deny" = "approve",
  scopes: readonly string[] = BOTH_SCOPES,
) {
  const html = await page.text();
  expect(page.status, html).toBe(200);
  const field = (name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(html)![1];
  const form = new URLSearchParams({
    handle: field("handle"),
    session_token: field("session_token"),
    merchant_id: field("merchant_id"),
    decision,
  });
  for (const scope of scopes) form.append("scope", scope);
  const answer = await fetch(url, { method: "POST", body: form, headers: { cookie: cookiesOf(page) }, redirect: "manual" });
  expect(answer.status, await answer.text()).toBe(302);
  return { html, csp: page.headers.get("content-security-policy") ?? "", location: new URL(answer.headers.get("location")!) };
}

/**
 * Discovery, registration (or a metadata document), the owner's consent (with `scopes` ticked)
 * and the token: an authorised SDK client.
 */
export async function authorisedAgent(
  sessionToken: string,
  provider = new MemoryProvider(),
  serverUrl = mcpUrl(),
  scopes: readonly string[] = BOTH_SCOPES,
) {
  expect(await auth(provider, { serverUrl, scope: BOTH_SCOPES.join(" ") })).toBe("REDIRECT");
  const { location, html, csp } = await consent(provider.authorizationUrl!, sessionToken, "approve", scopes);
  expect(location.searchParams.get("iss")).toBe(new URL(serverUrl).origin);
  // RFC 9207: the client checks the response's issuer against the one it discovered.
  const code = location.searchParams.get("code")!;
  expect(await auth(provider, { serverUrl, authorizationCode: code, iss: location.searchParams.get("iss")! })).toBe("AUTHORIZED");
  return { provider, html, csp };
}

/** An SDK client connected with `provider`'s tokens; the 2025 handshake unless `options` negotiate otherwise. */
export async function connect(
  provider: OAuthClientProvider,
  headers: Record<string, string> = {},
  serverUrl = mcpUrl(),
  options: ClientOptions = {},
) {
  const client = new Client({ name: "test agent", version: "1.0.0" }, options);
  const transport = new StreamableHTTPClientTransport(new URL(serverUrl), {
    authProvider: provider,
    fetch: (input, init) => {
      const merged = new Headers(init?.headers);
      for (const [name, value] of Object.entries(headers)) merged.set(name, value);
      return fetch(input, { ...init, headers: merged });
    },
  });
  await client.connect(transport);
  return client;
}

/** A tool result's structured body. */
export const body = (result: any) => result.structuredContent as any;
