/**
 * A database's schema as sorted lines of text, one per fact, so two databases compare line by line:
 * schemas, tables and columns (position among the live columns, type, nullability, default,
 * generation), constraints, indexes, views, domains, sequences, triggers, functions (signature,
 * result, language, volatility, security, settings and the md5 of the body), comments on all of
 * them, and every ACL, default privileges included. The service's schemas only (public and
 * private, extension members left out), and not the migration runner's own bookkeeping tables.
 */
import type postgres from "postgres";

type Queryable = Pick<postgres.Sql, "unsafe">;

const SNAPSHOT_SQL = `
with
  schemas as (select oid, nspname from pg_namespace where nspname in ('public', 'private')),
  members as (select classid, objid from pg_depend where deptype = 'e'),
  rels as (
    select c.oid, format('%I.%I', s.nspname, c.relname) as name, c.relkind, c.relacl
    from pg_class c join schemas s on s.oid = c.relnamespace
    where c.relkind in ('r', 'p', 'v', 'm', 'f', 'S', 'i')
      and c.oid not in (select objid from members where classid = 'pg_class'::regclass)
      and c.relname !~ '^schema_(migrations|domain_files)'
  ),
  procs as (
    select p.*, format('%I.%I(%s)', s.nspname, p.proname, pg_get_function_identity_arguments(p.oid)) as name
    from pg_proc p join schemas s on s.oid = p.pronamespace
    where p.oid not in (select objid from members where classid = 'pg_proc'::regclass)
  ),
  types as (
    select t.*, format('%I.%I', s.nspname, t.typname) as name
    from pg_type t join schemas s on s.oid = t.typnamespace
    where t.typtype = 'd' and t.oid not in (select objid from members where classid = 'pg_type'::regclass)
  ),
  facts as (
    select format('schema %I owner-acl %s comment %s', s.nspname, n.nspacl, obj_description(s.oid, 'pg_namespace'))
    from schemas s join pg_namespace n on n.oid = s.oid
    union all
    select format('relation %s kind %s acl %s comment %s', r.name, r.relkind, r.relacl, obj_description(r.oid, 'pg_class'))
    from rels r
    union all
    select format('column %s #%s %I %s%s default %s generated %s identity %s acl %s comment %s', r.name,
                  row_number() over (partition by r.oid order by a.attnum), a.attname, format_type(a.atttypid, a.atttypmod),
                  case when a.attnotnull then ' not null' else '' end, pg_get_expr(d.adbin, d.adrelid), a.attgenerated,
                  a.attidentity, a.attacl, col_description(r.oid, a.attnum))
    from rels r join pg_attribute a on a.attrelid = r.oid and a.attnum > 0 and not a.attisdropped
    left join pg_attrdef d on d.adrelid = r.oid and d.adnum = a.attnum
    where r.relkind <> 'i'
    union all
    select format('constraint %s %I %s comment %s', coalesce(r.name, t.name), c.conname, pg_get_constraintdef(c.oid),
                  obj_description(c.oid, 'pg_constraint'))
    from pg_constraint c left join rels r on r.oid = c.conrelid left join types t on t.oid = c.contypid
    where r.oid is not null or t.oid is not null
    union all
    select format('index %s', pg_get_indexdef(r.oid)) from rels r where r.relkind = 'i'
    union all
    select format('view %s %s', r.name, pg_get_viewdef(r.oid)) from rels r where r.relkind in ('v', 'm')
    union all
    select format('domain %s %s not null %s default %s comment %s', t.name, format_type(t.typbasetype, t.typtypmod),
                  t.typnotnull, t.typdefault, obj_description(t.oid, 'pg_type'))
    from types t
    union all
    select format('trigger %s comment %s', pg_get_triggerdef(g.oid), obj_description(g.oid, 'pg_trigger'))
    from pg_trigger g join rels r on r.oid = g.tgrelid where not g.tgisinternal
    union all
    select format('function %s returns %s language %s volatility %s strict %s security definer %s config %s body md5 %s acl %s comment %s',
                  p.name, pg_get_function_result(p.oid), l.lanname, p.provolatile, p.proisstrict, p.prosecdef, p.proconfig,
                  md5(p.prosrc), p.proacl, obj_description(p.oid, 'pg_proc'))
    from procs p join pg_language l on l.oid = p.prolang
    union all
    select format('default privileges of %s in %s on %s: %s', d.defaclrole::regrole, coalesce(d.defaclnamespace::regnamespace::text, 'any schema'),
                  d.defaclobjtype, d.defaclacl)
    from pg_default_acl d
  )
select coalesce(jsonb_agg(f order by f), '[]') as lines from facts as t(f)
`;

/** Every fact of the schema of `db`, one line each, sorted. */
export async function schemaSnapshot(db: Queryable): Promise<string[]> {
  const [{ lines }] = await db.unsafe(SNAPSHOT_SQL);
  return lines as string[];
}

/** Lines only `a` has and lines only `b` has: empty both when the schemas are equal. */
export function schemaDifference(a: string[], b: string[]): { onlyFirst: string[]; onlySecond: string[] } {
  const inA = new Set(a);
  const inB = new Set(b);
  return { onlyFirst: a.filter((l) => !inB.has(l)), onlySecond: b.filter((l) => !inA.has(l)) };
}
