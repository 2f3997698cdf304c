/**
 * The RPC mechanism: one function calls any `public.<name>(p jsonb) returns jsonb` of the database,
 * typed by the catalogue. The catalogue is an interface every domain extends with its own slice
 * (`shared/<domain>/rpc.ts`, the kernel's in `shared/kernel/rpc.ts`) by declaration merging, so a
 * domain's RPC names, parameters and rows live beside its code and this file imports no domain.
 * A call with a wrong name, parameter or result type does not compile; tests/sql/rpc-catalogue.test.ts
 * checks the merged catalogue against the database's functions.
 */
import { type Queryable, withConnectionRetry } from "./client";

/**
 * Name → [parameter, result], one property per RPC, declared by the slices:
 *
 * @example
 * declare module "../kernel/db/rpc" {
 *   interface RpcCatalogue {
 *     alias_reserve: [{ alias: string; ttl_seconds: number; … }, { expires_at: string }];
 *   }
 * }
 */
// biome-ignore lint/suspicious/noEmptyInterface: the slices declare its members (declaration merging).
export interface RpcCatalogue {}

type RpcName = keyof RpcCatalogue;
export type RpcParams<N extends RpcName> = RpcCatalogue[N][0];
export type RpcResult<N extends RpcName> = RpcCatalogue[N][1];

/**
 * Calls one RPC in one round trip and one implicit transaction. Our SQLSTATEs become their API
 * error; an unreachable database becomes `503 DATABASE_UNAVAILABLE` (shared/kernel/db/client.ts).
 *
 * @example const { expires_at } = await rpc(sql, "alias_reserve", { alias, ttl_seconds, … });
 */
export function rpc<N extends RpcName>(sql: Queryable, name: N, params: RpcParams<N>): Promise<RpcResult<N>> {
  return withConnectionRetry(() => rawRpc<RpcResult<N>>(sql, name, params));
}

/**
 * The statement behind `rpc`, untyped and untranslated: for SQL-level tests and benchmarks that
 * call RPCs with inputs the edge never sends and read raw SQLSTATEs.
 */
export async function rawRpc<T>(sql: Queryable, name: string, params: unknown): Promise<T> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`invalid rpc name ${name}`);
  const rows = await sql.unsafe(`select public.${name}($1::jsonb) as result`, [params as never]);
  return rows[0].result as T;
}
