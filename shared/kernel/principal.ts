/** Sandbox (`test`) or production (`live`): fixed by the key's prefix, and part of every tenant scope. */
export const environments = ["test", "live"] as const;
export type Environment = (typeof environments)[number];

/** A merchant key's kind: `publishable` for browsers, `secret` for servers (spec section 5). */
export type KeyKind = "publishable" | "secret";

/** The tenant every read and write is scoped by: one merchant in one environment. */
export interface Tenant {
  merchantId: string;
  environment: Environment;
}

/** A merchant calling through one of its keys, in one environment. */
export interface MerchantKeyPrincipal extends Tenant {
  kind: "merchant_key";
  keyKind: KeyKind;
  keyId: string;
}

/** A person calling from a first-party app with the session JWT minted at enrollment. */
export interface UserPrincipal extends Tenant {
  kind: "user";
  /** The person; `merchantId` is the merchant through which the session was minted. */
  identityId: string;
  sessionTokenHash: string;
}

/** The service's own servers (SERVICE_ROLE_KEY): not scoped to a merchant. */
export interface ServicePrincipal {
  kind: "service";
}

/**
 * A person on the service's hosted screen, acting inside one merchant's hosted session: the acts
 * are that merchant's, in the session's environment, and name the person by the merchant's
 * pseudonym as a merchant key does.
 */
export interface HostedSessionPrincipal extends Tenant {
  kind: "hosted_session";
  sessionId: string;
}

/** Who is calling on a merchant's behalf. Both kinds are scoped to one merchant and one environment. */
export type Principal = MerchantKeyPrincipal | UserPrincipal;

/**
 * An AI agent calling the MCP server: an OAuth client that an owner of the merchant authorised
 * (issue 13). It acts for that merchant in the owner's environment, within the scopes granted;
 * `clientId` is also how mandates name it as their holder (`granted_to`).
 */
export interface AgentPrincipal extends Tenant {
  kind: "agent";
  clientId: string;
  /** The owner who authorised it: it loses the merchant when that person stops owning it. */
  ownerIdentityId: string;
  scopes: readonly string[];
}
