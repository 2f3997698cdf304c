/**
 * House style: every schema, table, view, column, function, domain and trigger the migrations create
 * carries a comment. Enumerated from the catalog of the database under test (every schema but the
 * system ones; an extension's own objects are left out), so an object a later migration adds without
 * one fails here.
 */
import { describe, expect, it } from "vitest";
import { testDb } from "../harness/factories";

const UNCOMMENTED_SQL = `
with
  service_schemas as (
    select n.oid, n.nspname
    from pg_namespace n
    where n.nspname <> 'information_schema' and n.nspname !~ '^pg_'
      and not exists (select 1 from pg_depend d
                      where d.classid = 'pg_namespace'::regclass and d.objid = n.oid and d.deptype = 'e')
  ),
  extension_members as (select classid, objid from pg_depend where deptype = 'e'),
  relations as (
    select c.oid, format('%I.%I', s.nspname, c.relname) as name
    from pg_class c join service_schemas s on s.oid = c.relnamespace
    where c.relkind in ('r', 'p', 'v', 'm', 'f')
      and (c.oid) not in (select objid from extension_members where classid = 'pg_class'::regclass)
  ),
  missing as (
    select format('schema %I', s.nspname) as object from service_schemas s
    where obj_description(s.oid, 'pg_namespace') is null
    union all
    select format('table %s', r.name) from relations r where obj_description(r.oid, 'pg_class') is null
    union all
    select format('column %s.%I', r.name, a.attname)
    from relations r join pg_attribute a on a.attrelid = r.oid and a.attnum > 0 and not a.attisdropped
    where col_description(r.oid, a.attnum) is null
    union all
    select format('function %I.%I(%s)', s.nspname, p.proname, oidvectortypes(p.proargtypes))
    from pg_proc p join service_schemas s on s.oid = p.pronamespace
    where obj_description(p.oid, 'pg_proc') is null
      and p.oid not in (select objid from extension_members where classid = 'pg_proc'::regclass)
    union all
    select format('domain %I.%I', s.nspname, t.typname)
    from pg_type t join service_schemas s on s.oid = t.typnamespace
    where t.typtype = 'd' and obj_description(t.oid, 'pg_type') is null
      and t.oid not in (select objid from extension_members where classid = 'pg_type'::regclass)
    union all
    select format('trigger %I on %s', g.tgname, r.name)
    from pg_trigger g join relations r on r.oid = g.tgrelid
    where not g.tgisinternal and obj_description(g.oid, 'pg_trigger') is null
  )
select coalesce(jsonb_agg(object order by object), '[]') as missing,
       (select count(*)::int from relations) as relations
from missing
`;

describe("comments", () => {
  it("every schema, table, column, function, domain and trigger of the service has one", async () => {
    const [{ missing, relations }] = await testDb().unsafe(UNCOMMENTED_SQL);
    expect(relations).toBeGreaterThan(20);
    expect(missing).toEqual([]);
  });
});
