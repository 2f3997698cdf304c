-- ============================================================================
-- Search codes indexed where pgvector exists (D-682, amends D-680): an HNSW index on the 2,048-bit
-- codes by Hamming distance, so that picking a search's candidates walks a graph instead of scanning
-- every code of the scope (about 0.2 s at 10,000 templates). Where pgvector is absent (this test
-- machine's Postgres) the scan stays, and face_template_search chooses by whether the index exists.
-- ============================================================================
do $$
declare
  v_schema text := (select e.extnamespace::regnamespace::text from pg_extension e where e.extname = 'vector');
begin
  if v_schema is not null then
    execute format('create index face_templates_code_hnsw_idx on private.face_templates
                    using hnsw (code %s.bit_hamming_ops) where code is not null', v_schema);
    comment on index private.face_templates_code_hnsw_idx is
      'Search codes by Hamming distance (pgvector HNSW, D-682): a search''s candidates without a scan.';
  end if;
end $$;
