/** The part of workerd's `cloudflare:sockets` the wire client uses (shared/kernel/db/wire.ts). */
declare module "cloudflare:sockets" {
  import type { WireSocket } from "./wire";
  export function connect(
    address: { hostname: string; port: number },
    options?: { secureTransport?: "off" | "on" | "starttls"; allowHalfOpen?: boolean },
  ): WireSocket;
}
