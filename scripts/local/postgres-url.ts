/** Where a postgres:// URL points, as the local poolers need it to reach their upstream. */
export interface PostgresTarget {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
  /** The URL's `sslmode`, if it names one. */
  sslmode: string | null;
}

/**
 * The parts of a postgres:// URL with libpq's defaults (user postgres, database = user, port 5432).
 *
 * @example parsePostgresUrl("postgres://postgres@127.0.0.1:5432/hauth").database // "hauth"
 */
export function parsePostgresUrl(url: string): PostgresTarget {
  const u = new URL(url);
  if (!/^postgres(ql)?:$/.test(u.protocol)) throw new Error(`not a postgres:// URL: ${u.protocol}`);
  const user = decodeURIComponent(u.username) || "postgres";
  return {
    host: u.hostname.replace(/^\[|\]$/g, "") || "127.0.0.1",
    port: Number(u.port || 5432),
    user,
    password: decodeURIComponent(u.password),
    database: decodeURIComponent(u.pathname.replace(/^\//, "")) || user,
    sslmode: u.searchParams.get("sslmode"),
  };
}
