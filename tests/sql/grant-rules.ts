/**
 * The grant rule of supabase/migrations/20261127000100_platform.sql, checked against the catalog.
 *
 * Everything is enumerated from the catalog, so an object a later migration adds is checked without
 * anyone listing it here. The service's schemas are every schema but the system ones and those an
 * extension owns; an extension's own functions and tables are its business and are left out.
 *
 * The rule:
 * - a function in `public` is an RPC: `(p jsonb) returns jsonb`, security definer; executable by its
 *   owner and, where the role exists, by `service_role` (EXECUTE, no grant option); by nobody else;
 * - every other function, and every table, view, materialized view, foreign table, sequence and column
 *   in any of the schemas: reachable by its owner only (no ACL entry for another role or PUBLIC);
 * - no table, view or sequence lives in `public` (tables live in `private`);
 * - every function fixes `search_path` to '';
 * - a schema other than `public`: no USAGE or CREATE for anyone but its owner; `public`: no CREATE
 *   (USAGE on `public` is anyone's: it only lets a role look up names, and the objects are checked).
 * Each object is checked twice: its ACL exactly (what was granted, to PUBLIC or any role), and what
 * every role that is neither a superuser nor predefined (`pg_*`) can effectively do with it,
 * memberships included (a role inheriting `service_role` may execute what `service_role` may).
 */
import type postgres from "postgres";

/** A client or a transaction. */
type Queryable = Pick<postgres.Sql, "unsafe">;

export interface GrantReport {
  /** One line per breach of the rule, sorted; empty when the catalog follows it. */
  violations: string[];
  /** Every function checked, schema-qualified with its argument types (`public.mandate_consume(jsonb)`). */
  functions: string[];
  /** Every table, view, sequence … checked, schema-qualified (`private.mandates`). */
  relations: string[];
  /** The service's schemas. */
  schemas: string[];
  /** The roles whose effective privileges were checked (PUBLIC is checked through the ACLs). */
  roles: string[];
}

const REPORT_SQL = `
with
  service_schemas as (
    select n.oid, n.nspname, n.nspowner, n.nspacl
    from pg_namespace n
    where n.nspname <> 'information_schema' and n.nspname !~ '^pg_'
      and not exists (select 1 from pg_depend d
                      where d.classid = 'pg_namespace'::regclass and d.objid = n.oid and d.deptype = 'e')
  ),
  service_role as (select coalesce(array_agg(oid), '{}') as oids from pg_roles where rolname = 'service_role'),
  roles as (select oid, rolname from pg_roles where not rolsuper and rolname !~ '^pg_'),
  functions as (
    select p.oid, format('%I.%I(%s)', s.nspname, p.proname, oidvectortypes(p.proargtypes)) as name, s.nspname, p.proowner as owner,
           coalesce(p.proacl, acldefault('f', p.proowner)) as acl,
           p.pronargs, p.proargtypes, p.prorettype, p.proretset, p.prokind, p.prosecdef, p.proconfig
    from pg_proc p join service_schemas s on s.oid = p.pronamespace
    where not exists (select 1 from pg_depend d where d.classid = 'pg_proc'::regclass and d.objid = p.oid and d.deptype = 'e')
  ),
  relations as (
    select c.oid, format('%I.%I', s.nspname, c.relname) as name, s.nspname, c.relowner as owner, c.relkind,
           coalesce(c.relacl, acldefault(case when c.relkind = 'S' then 's' else 'r' end::"char", c.relowner)) as acl
    from pg_class c join service_schemas s on s.oid = c.relnamespace
    where c.relkind in ('r', 'p', 'v', 'm', 'f', 'S')
      and not exists (select 1 from pg_depend d where d.classid = 'pg_class'::regclass and d.objid = c.oid and d.deptype = 'e')
  ),
  -- every object with its ACL and what the rule grants beyond the owner
  objects as (
    select 'function' as kind, f.oid, f.name, f.owner, f.acl,
           case when f.nspname = 'public' then (select oids from service_role) else '{}'::oid[] end as grantees,
           array['EXECUTE'] as privileges
    from functions f
    union all
    select case when r.relkind = 'S' then 'sequence' else 'relation' end, r.oid, r.name, r.owner, r.acl, '{}', '{}'
    from relations r
    union all
    select 'column', r.oid, r.name || '.' || quote_ident(a.attname), r.owner, a.attacl, '{}', '{}'
    from relations r join pg_attribute a on a.attrelid = r.oid and a.attnum > 0 and not a.attisdropped
    where a.attacl is not null
    union all
    select 'schema', s.oid, quote_ident(s.nspname), s.nspowner, coalesce(s.nspacl, acldefault('n', s.nspowner)), '{}', '{}'
    from service_schemas s
  ),
  violations as (
    -- an ACL entry the rule does not give (to PUBLIC or any role)
    select format('%s %s grants %s to %s%s', o.kind, o.name, a.privilege_type,
                  case when a.grantee = 0 then 'PUBLIC' else a.grantee::regrole::text end,
                  case when a.is_grantable then ' with grant option' else '' end) as v
    from objects o cross join lateral aclexplode(o.acl) a
    where a.grantee <> o.owner
      and not (a.grantee = any (o.grantees) and a.privilege_type = any (o.privileges) and not a.is_grantable)
      -- anyone may look up names in public (Supabase grants it to its API roles); what is in it is checked itself
      and not (o.kind = 'schema' and o.name = 'public' and a.privilege_type = 'USAGE')
    union all
    -- an ACL entry the rule gives that is missing
    select format('%s %s does not grant %s to %s', o.kind, o.name, p.privilege,
                  case when g.grantee = 0 then 'PUBLIC' else g.grantee::regrole::text end)
    from objects o cross join unnest(o.grantees) g(grantee) cross join unnest(o.privileges) p(privilege)
    where not exists (select 1 from aclexplode(o.acl) a where a.grantee = g.grantee and a.privilege_type = p.privilege)
    union all
    -- what each role can effectively do, memberships included, against what the rule lets it do
    select format('role %s %s %s %s', r.rolname, case when e.can then 'can use' else 'cannot use' end, o.kind, o.name)
    from objects o
    cross join roles r
    cross join lateral (select
      case o.kind
        when 'function' then has_function_privilege(r.oid, o.oid, 'EXECUTE')
        when 'sequence' then has_sequence_privilege(r.oid, o.oid, 'USAGE, SELECT, UPDATE')
        when 'relation' then has_table_privilege(r.oid, o.oid, 'SELECT, INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER')
                             or has_any_column_privilege(r.oid, o.oid, 'SELECT, INSERT, UPDATE, REFERENCES')
        when 'schema' then has_schema_privilege(r.oid, o.oid, case when o.name = 'public' then 'CREATE' else 'USAGE, CREATE' end)
      end as can,
      pg_has_role(r.oid, o.owner, 'USAGE')
        or (o.kind <> 'schema' and exists (select 1 from unnest(o.grantees) g(grantee)
                                           where g.grantee <> 0 and pg_has_role(r.oid, g.grantee, 'USAGE'))) as may
    ) e
    where o.kind <> 'column' and e.can is distinct from e.may
    union all
    -- the shape of an RPC
    select format('function %s is not an RPC: (p jsonb) returns jsonb, security definer', f.name)
    from functions f
    where f.nspname = 'public'
      and not (f.prokind = 'f' and f.pronargs = 1 and f.proargtypes[0] = 'jsonb'::regtype and f.prorettype = 'jsonb'::regtype
               and not f.proretset and f.prosecdef)
    union all
    select format('function %s does not fix search_path to ''''', f.name)
    from functions f
    where not coalesce('search_path=""' = any (f.proconfig), false)
    union all
    select format('%s %s lives in public (tables live in private)', case when r.relkind = 'S' then 'sequence' else 'relation' end, r.name)
    from relations r
    where r.nspname = 'public'
  )
select
  coalesce((select jsonb_agg(v order by v) from violations), '[]') as violations,
  coalesce((select jsonb_agg(name order by name) from functions), '[]') as functions,
  coalesce((select jsonb_agg(name order by name) from relations), '[]') as relations,
  coalesce((select jsonb_agg(nspname order by nspname) from service_schemas), '[]') as schemas,
  coalesce((select jsonb_agg(rolname order by rolname) from roles), '[]') as roles
`;

/** Checks the whole catalog of the database `db` is connected to against the grant rule. */
export async function grantReport(db: Queryable): Promise<GrantReport> {
  const [row] = await db.unsafe(REPORT_SQL);
  return row as unknown as GrantReport;
}
